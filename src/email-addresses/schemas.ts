import { Type, type Static } from 'typebox';
import { DateTime, Email, Uuid } from '../platform/http/common-schemas.js';

export const EmailAddress = Type.Object({
  id: Uuid,
  email: Type.String({ description: 'Lower-cased.' }),
  verified: Type.Boolean({ description: 'Proven with a mailed code (or set by the Server API, an invitation or a provider).' }),
  primary: Type.Boolean({ description: "Exactly one address is primary: the user's `email`." }),
  createdAt: DateTime,
}, {
  title: 'EmailAddress', description: 'One of the email addresses of a user.',
  examples: [{ id: '01934f2a-7c1e-7d3a-9b2f-5e8c1a2b3c4d', email: 'ada@example.com', verified: true, primary: true, createdAt: '2026-11-24T10:00:00.000Z' }],
});
export type EmailAddress = Static<typeof EmailAddress>;

export const EmailAddressList = Type.Object({ items: Type.Array(EmailAddress) }, { title: 'EmailAddressList', description: 'The primary first, then the others in the order they were added.' });

export const EmailAddressParams = Type.Object({ id: Uuid }, { additionalProperties: false });
export const AddEmailAddressBody = Type.Object({ email: Email }, { additionalProperties: false });
export const VerifyEmailAddressBody = Type.Object({ code: Type.String({ pattern: '^[0-9]{6}$', description: 'The 6-digit code mailed to the address.' }) }, { additionalProperties: false });
