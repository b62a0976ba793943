import { invalidValue } from './errors.js';
import type { GroupRow, LinkedUser } from './store.js';
import { isUuid } from '../platform/ids.js';
import { isAcceptableEmail, normalizeEmail } from '../users/accounts.js';

/** RFC 7643/7644 schema URNs. */
export const SCHEMA = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  list: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patch: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
  serviceProviderConfig: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const;

/** The largest page a list answers (`count` above it is lowered, as RFC 7644 §3.4.2.4 allows). */
export const MAX_RESULTS = 100;

export interface ScimUser {
  schemas: string[]; id: string; externalId?: string; userName: string;
  name: { givenName?: string; familyName?: string; formatted?: string };
  displayName?: string;
  emails: { value: string; type?: string; primary?: boolean }[];
  active: boolean;
  meta: { resourceType: 'User'; created: string; lastModified: string; location: string };
}

export interface ScimGroup {
  schemas: string[]; id: string; displayName: string; externalId?: string;
  members?: { value: string; $ref?: string; display?: string }[];
  meta: { resourceType: 'Group'; created: string; lastModified: string; location: string };
}

/** What a directory may set on a user (the parts of a SCIM User Gatehouse keeps). */
export interface UserInput {
  userName: string; externalId: string | null; email: string; givenName: string | null; familyName: string | null; active: boolean;
}

/** The later of two times: a User changes when its Gatehouse user or its link does. */
const later = (a: Date, b: Date) => (a > b ? a : b).toISOString();

export function toScimUser({ link, user }: LinkedUser, base: string): ScimUser {
  return {
    schemas: [SCHEMA.user], id: user.id,
    ...(link.external_id !== null && { externalId: link.external_id }),
    userName: link.user_name,
    name: {
      ...(user.first_name !== null && { givenName: user.first_name }),
      ...(user.last_name !== null && { familyName: user.last_name }),
      ...(user.name !== null && { formatted: user.name }),
    },
    ...(user.name !== null && { displayName: user.name }),
    emails: user.email === null ? [] : [{ value: user.email, type: 'work', primary: true }],
    active: user.status === 'active',
    meta: { resourceType: 'User', created: link.created_at.toISOString(), lastModified: later(user.updated_at, link.updated_at), location: `${base}/Users/${user.id}` },
  };
}

export function toScimGroup(group: GroupRow, members: string[] | undefined, base: string): ScimGroup {
  return {
    schemas: [SCHEMA.group], id: group.id, displayName: group.display_name,
    ...(group.external_id !== null && { externalId: group.external_id }),
    ...(members && { members: members.map((id) => ({ value: id, $ref: `${base}/Users/${id}` })) }),
    meta: { resourceType: 'Group', created: group.created_at.toISOString(), lastModified: group.updated_at.toISOString(), location: `${base}/Groups/${group.id}` },
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const optionalString = (value: unknown, attribute: string): string | null => {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw invalidValue(`"${attribute}" must be a string.`);
  return value;
};

/**
 * SCIM booleans as identity providers send them: Entra ID sends `"True"`/`"False"` strings in PATCH values.
 * Absent means active (RFC 7643 leaves it to the provider; a new account is usable).
 */
export function scimBoolean(value: unknown, attribute: string): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
  throw invalidValue(`"${attribute}" must be a boolean.`);
}

/** The address a User gives: the primary email (or the first), else a userName that is an email address. */
function emailOf(body: Record<string, unknown>, userName: string): string {
  const emails = Array.isArray(body.emails) ? body.emails.filter(isObject) : [];
  const chosen = emails.find((e) => e.primary === true || e.primary === 'true') ?? emails.find((e) => e.type === 'work') ?? emails[0];
  const email = chosen ? optionalString(chosen.value, 'emails.value') : null;
  const address = email ?? (userName.includes('@') ? userName : null);
  if (!address) throw invalidValue('A User needs an email address: in "emails" (the primary one) or as a "userName" that is one.');
  // The email rule of every user creation, on the address as it is stored.
  if (!isAcceptableEmail(normalizeEmail(address))) throw invalidValue(`"${address.slice(0, 320)}" is not an email address a user may have.`);
  return address;
}

/** The User a POST or PUT body (or a patched resource) describes; 400 invalidValue when it lacks what Gatehouse needs. */
export function parseUser(body: unknown): UserInput {
  if (!isObject(body)) throw invalidValue('The body must be a SCIM User object.');
  const userName = optionalString(body.userName, 'userName');
  if (!userName || userName.length > 256) throw invalidValue('"userName" is required: a string of 1 to 256 characters.');
  const name = isObject(body.name) ? body.name : {};
  return {
    userName, externalId: optionalString(body.externalId, 'externalId'), email: emailOf(body, userName),
    givenName: optionalString(name.givenName, 'name.givenName'), familyName: optionalString(name.familyName, 'name.familyName'),
    active: scimBoolean(body.active, 'active'),
  };
}

/** The Group a POST or PUT body describes, with its member ids. */
export function parseGroup(body: unknown): { displayName: string; externalId: string | null; members: string[] } {
  if (!isObject(body)) throw invalidValue('The body must be a SCIM Group object.');
  const displayName = optionalString(body.displayName, 'displayName');
  if (!displayName || displayName.length > 256) throw invalidValue('"displayName" is required: a string of 1 to 256 characters.');
  return { displayName, externalId: optionalString(body.externalId, 'externalId'), members: memberIds(body.members) };
}


/** The user ids of a `members` value (`[{value}]`); ids that are no uuid name nobody the directory has and are 400. */
export function memberIds(members: unknown): string[] {
  if (members === undefined || members === null) return [];
  const list = Array.isArray(members) ? members : [members];
  return [...new Set(list.map((member) => {
    const value = isObject(member) ? member.value : member;
    if (typeof value !== 'string' || !isUuid(value)) throw invalidValue('Each member must be {"value": "<User id>"}.');
    return value.toLowerCase();
  }))];
}

