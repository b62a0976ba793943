import { Type, type Static } from 'typebox';
import { DateTime, PageQuery, Uuid } from '../platform/http/common-schemas.js';

export const DataRequestType = Type.Union([Type.Literal('export'), Type.Literal('erasure')], { description: '`export` (GDPR Art. 15 and 20) or `erasure` (Art. 17).' });
export type DataRequestType = Static<typeof DataRequestType>;

export const DataRequestStatus = Type.Union(
  [Type.Literal('pending'), Type.Literal('ready'), Type.Literal('scheduled'), Type.Literal('completed'), Type.Literal('cancelled')],
  { description: '`pending` (an export being prepared), `ready` (an export to download until `expiresAt`), `scheduled` (an erasure in its grace period, until `completesAt`), '
    + '`completed` (an erasure done, or an export whose download window closed), `cancelled` (an erasure cancelled during its grace period).' },
);
export type DataRequestStatus = Static<typeof DataRequestStatus>;

export const DataRequest = Type.Object({
  id: Uuid,
  userId: Uuid,
  type: DataRequestType,
  status: DataRequestStatus,
  requestedBy: Type.Object({
    type: Type.String({ description: '`user` (the user themselves), `api_key` (the Server API) or `system`.' }),
    id: Type.Union([Uuid, Type.Null()]),
  }),
  createdAt: DateTime,
  completesAt: Type.Optional(Type.Union([DateTime, Type.Null()], { description: 'An erasure: when its grace period ends and it runs.' })),
  readyAt: Type.Optional(Type.Union([DateTime, Type.Null()], { description: 'An export: when its archive was ready.' })),
  expiresAt: Type.Optional(Type.Union([DateTime, Type.Null()], { description: 'An export: when its download link expires (7 days after it was ready).' })),
  completedAt: Type.Optional(Type.Union([DateTime, Type.Null()])),
  cancelledAt: Type.Optional(Type.Union([DateTime, Type.Null()])),
  cancelReason: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: '`requested` (cancelled by the user or an operator) or `last_owner` (when it came to run, the user was the only active owner of an organization).' })),
}, { title: 'DataRequest', description: "A user's request to export or erase their personal data." });
export type DataRequest = Static<typeof DataRequest>;

export const CreateDataRequestBody = Type.Object({ type: DataRequestType }, { additionalProperties: false });
export type CreateDataRequestBody = Static<typeof CreateDataRequestBody>;

export const StartDataRequestBody = Type.Object({
  type: DataRequestType,
  graceDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 365, description: "An erasure's grace period in days, instead of the environment's `dataErasureGraceDays`; 0 runs it at once." })),
}, { additionalProperties: false });
export type StartDataRequestBody = Static<typeof StartDataRequestBody>;

export const DataRequestParams = Type.Object({ requestId: Uuid });
export const UserDataRequestParams = Type.Object({ userId: Uuid });

export const ListDataRequestsQuery = Type.Object({
  ...PageQuery.properties,
  status: Type.Optional(DataRequestStatus),
  type: Type.Optional(DataRequestType),
  userId: Type.Optional(Uuid),
}, { additionalProperties: false });
export type ListDataRequestsQuery = Static<typeof ListDataRequestsQuery>;

export interface DataRequestFilter { status?: DataRequestStatus; type?: DataRequestType; userId?: string }

export const DataExportArchive = Type.Object({
  format: Type.Literal('gatehouse.data-export.v1'),
  requestId: Uuid,
  userId: Uuid,
  environmentId: Uuid,
  generatedAt: DateTime,
  sections: Type.Record(Type.String(), Type.Unknown(), {
    description: 'One entry per section: `user` (the profile without password hash or private metadata), `emailAddresses`, `sessions`, `identities`, `memberships`, '
      + '`invitations`, `organizationInvitations`, `auditEvents` (events whose actor or a target is the user) and `dataRequests`.',
  }),
}, { title: 'DataExportArchive', description: 'Everything Gatehouse keeps about the user, as one JSON document.' });
export type DataExportArchive = Static<typeof DataExportArchive>;
