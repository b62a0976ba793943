import { MAX_RESULTS, SCHEMA } from './resources.js';

/**
 * The discovery documents of RFC 7644 §4 for a directory whose base URL is `base`: what Okta and Entra ID read
 * before they provision. They state what Gatehouse does: PATCH and filters (`eq` on userName, externalId,
 * displayName), no bulk, sort, ETags or password changes, and bearer tokens.
 */
export const serviceProviderConfig = (base: string) => ({
  schemas: [SCHEMA.serviceProviderConfig],
  patch: { supported: true },
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: true, maxResults: MAX_RESULTS },
  changePassword: { supported: false },
  sort: { supported: false },
  etag: { supported: false },
  authenticationSchemes: [{
    type: 'oauthbearertoken', name: 'OAuth Bearer Token', primary: true,
    description: 'The directory\'s token, from POST /api/server/v1/organizations/{id}/directories, as "Authorization: Bearer <token>".',
  }],
  meta: { resourceType: 'ServiceProviderConfig', location: `${base}/ServiceProviderConfig` },
});

const attribute = (name: string, extra: Record<string, unknown> = {}) => ({
  name, type: 'string', multiValued: false, required: false, caseExact: false, mutability: 'readWrite', returned: 'default', uniqueness: 'none', ...extra,
});

const USER_ATTRIBUTES = [
  attribute('userName', { required: true, uniqueness: 'server', description: 'Unique in the directory; usually the email address.' }),
  attribute('externalId', { caseExact: true, description: 'The identity provider\'s id of the user.' }),
  { ...attribute('name'), type: 'complex', subAttributes: [attribute('givenName'), attribute('familyName'), attribute('formatted', { mutability: 'readOnly' })] },
  attribute('displayName', { mutability: 'readOnly' }),
  { ...attribute('emails'), type: 'complex', multiValued: true, subAttributes: [attribute('value'), attribute('type'), { ...attribute('primary'), type: 'boolean' }] },
  { ...attribute('active'), type: 'boolean', description: 'False: sign-in is refused and every session ends at once.' },
];

const GROUP_ATTRIBUTES = [
  attribute('displayName', { required: true, uniqueness: 'server', description: 'Mapped to an organization role by the directory\'s groupRoles.' }),
  attribute('externalId', { caseExact: true }),
  { ...attribute('members'), type: 'complex', multiValued: true, subAttributes: [attribute('value', { mutability: 'immutable' }), { ...attribute('$ref'), type: 'reference', referenceTypes: ['User'] }, attribute('display')] },
];

export const schemas = (base: string) => [
  { schemas: [SCHEMA.schema], id: SCHEMA.user, name: 'User', description: 'User Account', attributes: USER_ATTRIBUTES, meta: { resourceType: 'Schema', location: `${base}/Schemas/${SCHEMA.user}` } },
  { schemas: [SCHEMA.schema], id: SCHEMA.group, name: 'Group', description: 'Group', attributes: GROUP_ATTRIBUTES, meta: { resourceType: 'Schema', location: `${base}/Schemas/${SCHEMA.group}` } },
];

export const resourceTypes = (base: string) => [
  { schemas: [SCHEMA.resourceType], id: 'User', name: 'User', endpoint: '/Users', description: 'User Account', schema: SCHEMA.user, meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/User` } },
  { schemas: [SCHEMA.resourceType], id: 'Group', name: 'Group', endpoint: '/Groups', description: 'Group', schema: SCHEMA.group, meta: { resourceType: 'ResourceType', location: `${base}/ResourceTypes/Group` } },
];

/** A ListResponse of all of `resources` (the discovery lists are whole). */
export const listOf = (resources: unknown[]) => ({ schemas: [SCHEMA.list], totalResults: resources.length, itemsPerPage: resources.length, startIndex: 1, Resources: resources });
