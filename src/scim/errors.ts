import { ProblemError } from '../platform/http/problem.js';

/**
 * SCIM's problems. `scimType` (RFC 7644 §3.12) rides in the problem's extra properties: on /scim the one error
 * handler renders it in SCIM's error schema, elsewhere it would be an ordinary property.
 */
const scim = (status: number, code: string, scimType: string | undefined, detail: string) =>
  new ProblemError(status, code, detail, scimType ? { scimType } : {});

export const directoryNotFound = () => scim(404, 'resource_not_found', undefined, 'No SCIM directory with this id in this organization.');
export const scimUnauthenticated = () => new ProblemError(401, 'unauthenticated',
  'Send the directory\'s SCIM token as "Authorization: Bearer <token>" (POST /api/server/v1/organizations/{id}/directories answers it once).');
export const resourceNotFound = (type: string, id: string) => scim(404, 'resource_not_found', undefined, `No ${type} "${id.slice(0, 100)}" in this directory.`);
export const uniqueness = (detail: string) => scim(409, 'resource_conflict', 'uniqueness', detail);
export const invalidFilter = (detail: string) => scim(400, 'invalid_request', 'invalidFilter', detail);
export const invalidValue = (detail: string) => scim(400, 'invalid_request', 'invalidValue', detail);
export const invalidPath = (detail: string) => scim(400, 'invalid_request', 'invalidPath', detail);
export const noTarget = (detail: string) => scim(400, 'invalid_request', 'noTarget', detail);
export const invalidSyntax = (detail: string) => scim(400, 'invalid_request', 'invalidSyntax', detail);
export const emailOutsideVerifiedDomains = (email: string) => scim(400, 'email_domain_not_verified', 'invalidValue',
  `"${email.slice(0, 320)}" is not at a verified domain of the directory's organization: a directory provisions only addresses at its organization's verified domains.`);
