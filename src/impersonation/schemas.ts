import { Type, type Static } from 'typebox';
import { DateTime, Nullable, pageQuery, Uuid } from '../platform/http/common-schemas.js';

export const LIFETIME_SECONDS = { min: 60, max: 600, default: 600 };

export const MintBody = Type.Object({
  actorUserId: Type.Optional(Type.String({
    format: 'uuid',
    description: 'The operator: a user of this environment, recorded for accountability. Required with a secret key; with a dashboard operator\'s '
      + 'session it may be left out, and the signed-in operator is then the actor (ledger `actorOperatorId`).',
  })),
  reason: Type.String({ minLength: 1, maxLength: 1000, pattern: '\\S', description: 'Why; recorded in the ledger and in the audit events of the mint and the redeem.' }),
  redirectUrl: Type.Optional(Type.String({
    minLength: 1, maxLength: 2048, pattern: '^[\\x21-\\x7e]+$',
    description: "Landing URL after the browser link is redeemed, used exactly as given (a fragment is kept). Its origin must be one of the allowed origins; percent-encode anything outside printable ASCII. Default: the impersonationLandingUrl setting.",
  })),
  expiresInSeconds: Type.Integer({ minimum: LIFETIME_SECONDS.min, maximum: LIFETIME_SECONDS.max, default: LIFETIME_SECONDS.default, description: '60 to 600; default 600.' }),
}, { additionalProperties: false });
export type MintBody = Static<typeof MintBody>;

export const MintedToken = Type.Object({
  id: Uuid,
  token: Type.String({ description: 'Single use; shown only here and stored hashed.' }),
  expiresInSeconds: Type.Integer(),
  expiresAt: DateTime,
  url: Nullable(Type.String({ description: '{frontend_url}/_svc/auth/session/impersonate?token=...; null when there is no landing URL.' })),
}, { title: 'ImpersonationToken', description: 'A single-use impersonation token, shown only here, and the link that redeems it.' });
export type MintedToken = Static<typeof MintedToken>;

export const ImpersonationStatus = Type.Union([Type.Literal('pending'), Type.Literal('redeemed'), Type.Literal('expired'), Type.Literal('revoked')]);

/** One row of the usage ledger: who, for whom, why, when, and when and from where it was redeemed. */
export const Impersonation = Type.Object({
  id: Uuid,
  actorUserId: Type.Union([Uuid, Type.Null()], { description: 'The user of this environment who impersonates; null when a dashboard operator does (`actorOperatorId`).' }),
  actorOperatorId: Type.Union([Uuid, Type.Null()], { description: 'The dashboard operator who impersonates, when the mint was made with their session and no actorUserId; else null. Exactly one of actorUserId and actorOperatorId is set.' }),
  targetUserId: Uuid,
  reason: Type.String(),
  landingUrl: Nullable(Type.String()),
  status: ImpersonationStatus,
  month: Type.String({ description: 'The UTC calendar month the mint counts in, YYYY-MM.' }),
  createdAt: DateTime,
  expiresAt: DateTime,
  redemption: Nullable(Type.Object({
    redeemedAt: DateTime, ipAddress: Nullable(Type.String()), userAgent: Nullable(Type.String()), sessionId: Nullable(Uuid),
  })),
  revokedAt: Nullable(DateTime),
}, { title: 'Impersonation', description: 'One impersonation of the ledger: who, for whom, why, when, and its redemption.' });
export type Impersonation = Static<typeof Impersonation>;

const Month = Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$', description: 'A UTC calendar month, YYYY-MM.' });

export const ListImpersonationsQuery = Type.Object({
  ...pageQuery({ outOfRange: 'clamp' }).properties,
  month: Type.Optional(Month),
  actorUserId: Type.Optional(Type.String({ format: 'uuid' })),
  targetUserId: Type.Optional(Type.String({ format: 'uuid' })),
}, { additionalProperties: false });
export type ListImpersonationsQuery = Static<typeof ListImpersonationsQuery>;

export const Usage = Type.Object({
  month: Month,
  used: Type.Integer({ description: 'Tokens minted this month.' }),
  quota: Type.Integer({ description: "The plan's impersonationQuotaPerMonth." }),
  remaining: Type.Integer(),
  resetsAt: DateTime,
}, { title: 'ImpersonationUsage', description: 'This month\'s impersonation tokens against the quota.' });
export type Usage = Static<typeof Usage>;

export const ImpersonationParams = Type.Object({ impersonationId: Uuid }, { additionalProperties: false });

const Token = Type.String({ minLength: 1, maxLength: 256, description: 'The token from the mint.' });
export const RedeemBody = Type.Object({ token: Token }, { additionalProperties: false });
export const RedeemQuery = Type.Object({ token: Token }, { additionalProperties: false });

/**
 * Who impersonates: a user of the environment (the Server API's actorUserId), or a dashboard operator (a mint
 * made with the operator's session and no actorUserId). Exactly one of the ledger's two actor columns names them.
 */
export type Impersonator = { type: 'user' | 'operator'; id: string };
