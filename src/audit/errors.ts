import { ProblemError } from '../platform/http/problem.js';
import { rateLimited } from '../platform/http/problems.js';
import { validationDetail } from '../platform/http/validation-errors.js';

export const invalidIdempotencyKey = (detail: string) => new ProblemError(400, 'invalid_idempotency_key', detail);
export const idempotencyKeyReused = (headers: Record<string, string>) => new ProblemError(422, 'idempotency_key_reused',
  'This Idempotency-Key was already used with a different request body in this environment; use a new key for a new event.', {}, headers);
export const auditStorageUnavailable = () => new ProblemError(503, 'audit_storage_unavailable',
  'The audit log is disabled for this environment (setting auditLogEnabled).');
export const invalidAuditEvent = (errors: { path: string; message: string }[]) =>
  new ProblemError(400, 'invalid_request', validationDetail(errors, 'body'), { errors });
export const referencedResourceNotFound = (missing: { path: string; type: string; id: string }[]) => new ProblemError(404, 'resource_not_found',
  `Not found in this environment: ${missing.map((m) => `${m.type} ${m.id} (${m.path})`).join(', ')}.`, { missing });
export const auditEventNotFound = () => new ProblemError(404, 'resource_not_found', 'No audit event with this id in this environment.');
export const auditRateLimited = (retryAfterSeconds: number, headers: Record<string, string>) =>
  rateLimited(retryAfterSeconds, `At most 600 audit appends per environment per UTC minute; retry in ${retryAfterSeconds} s.`, headers);
