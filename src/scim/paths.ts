import { parse, type AttrExp, type Filter, type LogExp, type NotFilter } from 'scim2-parse-filter';
import { invalidPath } from './errors.js';
import { SCHEMA } from './resources.js';

/**
 * The attributes a PATCH may name, from RFC 7643's schemas: the core User (§4.1) with the enterprise extension
 * (§4.3), and the core Group (§4.2). Gatehouse keeps only some of them (resources.ts); the rest are accepted and
 * dropped, as identity providers send them by default. A complex attribute lists its sub-attributes.
 *
 * Why a list and not just the patch library: scim-patch walks a path's segments and a value's keys into the
 * resource with plain assignment, so `name.__proto__.x` would write to Object.prototype of the whole process.
 * Only names from this list ever reach it.
 */
type Attributes = Record<string, readonly string[] | null>;

const MULTI = ['value', 'display', 'type', 'primary'] as const;
const USER: Attributes = {
  username: null, externalid: null, displayname: null, nickname: null, profileurl: null, title: null, usertype: null,
  preferredlanguage: null, locale: null, timezone: null, active: null, password: null,
  name: ['formatted', 'familyName', 'givenName', 'middleName', 'honorificPrefix', 'honorificSuffix'],
  emails: MULTI, phonenumbers: MULTI, ims: MULTI, photos: MULTI, entitlements: MULTI, roles: MULTI, x509certificates: MULTI,
  addresses: ['formatted', 'streetAddress', 'locality', 'region', 'postalCode', 'country', 'type', 'primary'],
  groups: ['value', '$ref', 'display', 'type'],
};
const ENTERPRISE_USER: Attributes = {
  employeenumber: null, costcenter: null, organization: null, division: null, department: null,
  manager: ['value', '$ref', 'displayName'],
};
const GROUP: Attributes = { displayname: null, externalid: null, members: ['value', '$ref', 'display', 'type'] };

export const ENTERPRISE_USER_SCHEMA = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';

export type ResourceType = 'User' | 'Group';
const SCHEMAS: Record<ResourceType, Record<string, Attributes>> = {
  User: { [SCHEMA.user.toLowerCase()]: USER, [ENTERPRISE_USER_SCHEMA.toLowerCase()]: ENTERPRISE_USER },
  Group: { [SCHEMA.group.toLowerCase()]: GROUP },
};
const CORE: Record<ResourceType, Attributes> = { User: USER, Group: GROUP };

/** `[urn:…:]attribute[filter][.subAttribute]` (RFC 7644 §3.5.2's PATH, as attrPath or valuePath). */
const PATH = /^(?:(urn:[\w.:-]+):)?([A-Za-z][\w-]*)(?:\[(.+)\])?(?:\.([A-Za-z$][\w$-]*))?$/s;

const refuse = (path: string, why: string) => invalidPath(`"${path.slice(0, 200)}" ${why}`);

const hasSub = (subs: readonly string[], name: string) => subs.some((sub) => sub.toLowerCase() === name.toLowerCase());

/** The sub-attributes a filter compares: `type eq "work"`, `value eq "…" and primary eq true`, `not (…)`. */
function filteredNames(filter: Filter): string[] {
  switch (filter.op) {
    case 'and': case 'or': return (filter as LogExp).filters.flatMap(filteredNames);
    case 'not': return filteredNames((filter as NotFilter).filter);
    case '[]': return [''];
    default: return [(filter as AttrExp).attrPath];
  }
}

/** The attribute a path names, checked against the schemas; its sub-attributes when it is complex (null otherwise). */
export function checkPath(resource: ResourceType, path: string): { subAttributes: readonly string[] | null } {
  const match = PATH.exec(path.trim());
  if (!match) throw refuse(path, 'is not an attribute path of the SCIM schema.');
  const [, urn, name, filterText, sub] = match;
  const attributes = urn ? SCHEMAS[resource][urn.toLowerCase()] : CORE[resource];
  if (!attributes) throw refuse(path, `names a schema this ${resource} resource does not have.`);
  if (!Object.hasOwn(attributes, name!.toLowerCase())) throw refuse(path, `is not an attribute of the ${resource} schema.`);
  const subAttributes = attributes[name!.toLowerCase()]!;
  if ((filterText !== undefined || sub !== undefined) && !subAttributes) throw refuse(path, 'names a sub-attribute of a simple attribute.');
  if (sub !== undefined && !hasSub(subAttributes!, sub)) throw refuse(path, `is not a sub-attribute of "${name}".`);
  if (filterText !== undefined) {
    let filter: Filter;
    try {
      filter = parse(filterText);
    } catch {
      throw refuse(path, 'has a filter that is not a valid SCIM filter.');
    }
    if (!filteredNames(filter).every((compared) => hasSub(subAttributes!, compared))) throw refuse(path, `filters on what is not a sub-attribute of "${name}".`);
  }
  return { subAttributes: sub === undefined ? subAttributes : null };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Refuses (400 invalidPath) an operation whose path, or whose value's keys where scim-patch walks them, is not in
 * the schemas: without a path each key is itself a path (or an extension's URN holding its attributes); at a
 * complex attribute each key is one of its sub-attributes.
 */
export function checkOperationTargets(resource: ResourceType, operation: { path?: string; value?: unknown }) {
  const { path, value } = operation;
  if (path === undefined) {
    if (!isObject(value)) return;
    for (const [key, inner] of Object.entries(value)) {
      const extension = SCHEMAS[resource][key.toLowerCase()];
      if (extension && key.toLowerCase() !== SCHEMA.user.toLowerCase() && key.toLowerCase() !== SCHEMA.group.toLowerCase()) {
        if (isObject(inner)) for (const name of Object.keys(inner)) checkPath(resource, `${key}:${name}`);
        continue;
      }
      const { subAttributes } = checkPath(resource, key);
      if (subAttributes && isObject(inner)) for (const name of Object.keys(inner)) checkSubAttribute(key, subAttributes, name);
    }
    return;
  }
  const { subAttributes } = checkPath(resource, path);
  if (subAttributes && isObject(value)) for (const name of Object.keys(value)) checkSubAttribute(path, subAttributes, name);
}

function checkSubAttribute(path: string, subAttributes: readonly string[], name: string) {
  if (!hasSub(subAttributes, name)) throw refuse(`${path}.${name}`, `is not a sub-attribute of "${path.slice(0, 100)}".`);
}
