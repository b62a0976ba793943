import { parse, type Filter } from 'scim2-parse-filter';
import { invalidFilter, invalidValue } from './errors.js';
import { MAX_RESULTS, SCHEMA } from './resources.js';
import type { ListFilter, Window } from './store.js';
import type { ScimListQuery } from './schemas.js';

/** The attributes a list filters on, by resource; identity providers look users and groups up by these before creating them. */
const FILTERABLE = {
  User: { username: 'userName', externalid: 'externalId' },
  Group: { displayname: 'displayName', externalid: 'externalId' },
} as const;

/**
 * The one `eq` comparison Gatehouse answers, from a filter parsed by scim2-parse-filter (RFC 7644 §3.4.2.2):
 * `userName eq "…"`, `externalId eq "…"` (Users), `displayName eq "…"`, `externalId eq "…"` (Groups). An
 * attribute may carry its schema URN. Anything else is 400 invalidFilter, never an unfiltered answer.
 */
export function listFilter(resource: 'User' | 'Group', text: string | undefined): ListFilter | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  let ast: Filter;
  try {
    ast = parse(text);
  } catch {
    throw invalidFilter(`The filter "${text.slice(0, 200)}" is not a valid SCIM filter.`);
  }
  const schemaPrefix = `${resource === 'User' ? SCHEMA.user : SCHEMA.group}:`.toLowerCase();
  const path = 'attrPath' in ast ? ast.attrPath.toLowerCase().replace(schemaPrefix, '') : '';
  const attribute = (FILTERABLE[resource] as Record<string, ListFilter['attribute']>)[path];
  if (ast.op !== 'eq' || !attribute || !('compValue' in ast) || typeof ast.compValue !== 'string') {
    const names = Object.values(FILTERABLE[resource]).map((name) => `${name} eq "…"`).join(', ');
    throw invalidFilter(`Only ${names} filters are supported.`);
  }
  return { attribute, value: ast.compValue };
}

function positiveInteger(value: string | undefined, name: string): number | undefined {
  if (value === undefined || value === '') return undefined;
  if (!/^-?\d{1,9}$/.test(value)) throw invalidValue(`"${name}" must be an integer.`);
  return Number(value);
}

/** startIndex is 1-based (below 1 counts as 1) and count at most MAX_RESULTS (negative counts as 0), as RFC 7644 §3.4.2.4 says. */
export function listWindow(query: ScimListQuery): Window {
  const startIndex = Math.max(1, positiveInteger(query.startIndex, 'startIndex') ?? 1);
  const count = Math.min(MAX_RESULTS, Math.max(0, positiveInteger(query.count, 'count') ?? MAX_RESULTS));
  return { startIndex, count };
}

/** The ListResponse of a page. */
export const listResponse = <T>(resources: T[], total: number, window: Window) => ({
  schemas: [SCHEMA.list], totalResults: total, itemsPerPage: resources.length, startIndex: window.startIndex, Resources: resources,
});
