import { Type, type Static } from 'typebox';
import { DateTime, Nullable, Uuid } from '../platform/http/common-schemas.js';

export const FactorType = Type.Literal('totp');

export const Factor = Type.Object({
  id: Uuid, type: FactorType, name: Type.String(), createdAt: DateTime, lastUsedAt: Nullable(DateTime),
}, { title: 'Factor', description: 'A confirmed second factor (its secret never leaves the server).' });
export type Factor = Static<typeof Factor>;

export const MfaOverview = Type.Object({
  factors: Type.Array(Factor),
  backupCodesRemaining: Type.Integer({ minimum: 0, description: 'Unused backup codes; 0 when no factor is enrolled.' }),
}, { title: 'MfaOverview' });
export type MfaOverview = Static<typeof MfaOverview>;

export const TotpEnrolment = Type.Object({
  factorId: Uuid,
  secret: Type.String({ description: 'Base32, for typing into an authenticator app by hand.' }),
  otpauthUri: Type.String({ description: 'otpauth://totp/... (RFC 6238: SHA-1, 6 digits, 30 s), what the QR code holds.' }),
  qrCodeSvg: Type.String({ description: 'An SVG image of the QR code of otpauthUri.' }),
}, { title: 'TotpEnrolment', description: 'A pending TOTP factor: confirm it with a first code.' });

export const BackupCodes = Type.Object({
  backupCodes: Type.Array(Type.String(), { minItems: 10, maxItems: 10, description: 'Single use each; shown this once, stored hashed.' }),
}, { title: 'BackupCodes' });

export const TotpCode = Type.String({ pattern: '^[0-9]{6}$', description: 'The 6-digit code the authenticator app shows.' });
export const ConfirmTotpBody = Type.Object({ code: TotpCode }, { additionalProperties: false });
export const FactorParams = Type.Object({ factorId: Uuid }, { additionalProperties: false });
