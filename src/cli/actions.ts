import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type { Config } from '../config.js';
import { PutProviderBody } from '../oauth/schemas.js';
import { CreateRoleSetBody } from '../organizations/schemas.js';
import { CreateUserBody } from '../users/schemas.js';
import { CreateOperatorBody } from '../operators/schemas.js';
import type { Show } from './output.js';
import type { Services } from './services.js';

/**
 * Each CLI command as an action: what it does through the services over the database, the same as a call
 * of the running server's API (when a server holds the embedded database), and how its answer is shown.
 * The two paths answer the same shape, so `--json` prints the same either way.
 */
export interface Action {
  direct(services: Services): Promise<unknown>;
  /** The admin API call, or a Server API call of `environmentId` (the CLI issues a key for it and revokes it after). */
  http?: HttpCall;
  show: Show;
}
export interface HttpCall {
  environmentId?: string; method: string; path: string;
  /** The body, or how to make it from what a GET of the same path answers now (a list the API replaces whole). */
  body?: unknown;
  /** The answer in the shape `direct` gives. */
  answer?: (body: never) => unknown;
}

export class UsageError extends Error {}

export interface Args { operands: string[]; options: Record<string, string | string[] | undefined>; config: Config }

const page = (options: Args['options']) => {
  const limit = options.limit === undefined ? 20 : Number(options.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw new UsageError('--limit must be a whole number from 1 to 100.');
  const cursor = options.cursor as string | undefined;
  if (cursor !== undefined && !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(cursor)) throw new UsageError('--cursor must be the nextCursor of the previous page (a uuid).');
  return { limit, ...(cursor && { cursor }) };
};
const query = (params: Record<string, string | number | string[] | undefined>) => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) for (const v of [value ?? []].flat()) search.append(name, String(v));
  const text = search.toString();
  return text ? `?${text}` : '';
};

function parseJson(text: string | undefined, what: string) {
  if (!text) throw new UsageError(`Missing ${what}.`);
  try { return JSON.parse(text); } catch { throw new UsageError(`${what} is not valid JSON: ${text}`); }
}

/** `owner:Owner,billing:Billing` as role definitions; a role without a name is named after its key. */
function parseRoles(text: string) {
  return text.split(',').map((entry) => entry.trim()).filter(Boolean).map((entry) => {
    const [key, ...name] = entry.split(':');
    return { key: key!.trim(), name: name.join(':').trim() || key!.trim() };
  });
}

/** A body checked against the schema its HTTP route validates with, so both paths refuse the same input. */
function checked<T extends TSchema>(schema: T, body: unknown, what: string): Static<T> {
  const invalid = [...Value.Errors(schema, body)].filter((e) => e.message !== 'schema is false').map((e) => `${e.instancePath || '/'} ${e.message}`);
  if (invalid.length > 0) throw new UsageError(`Invalid ${what}: ${invalid.join('; ')}.`);
  return body as Static<T>;
}

/** The provider JSON of `oauth-providers set`, with the secret from the environment when it holds none. */
function providerBody(text: string | undefined) {
  const given = parseJson(text, 'provider JSON');
  const secret = process.env.GATEHOUSE_OAUTH_CLIENT_SECRET;
  return checked(PutProviderBody, Value.Default(PutProviderBody, { ...(secret && { clientSecret: secret }), ...given }), 'provider');
}

type Page = { items: Record<string, unknown>[]; nextCursor: string | null; hasMore: boolean };
const itemsOf = (result: { items: Record<string, unknown>[] }) => result.items;
const pageTable = (columns: string[]): Show => ({
  kind: 'table', columns, rows: itemsOf,
  more: (result: Page) => (result.hasMore ? `More: repeat with --cursor ${result.nextCursor}` : undefined),
});
const USER_COLUMNS = ['id', 'email', 'name', 'status', 'createdAt'];

/** The actions by command name; each takes the command's operands and options. */
export const ACTIONS: Record<string, (args: Args) => Action> = {
  'env create': ({ options }) => {
    const body = { name: options.name as string, frontendHost: options.frontendHost as string | undefined };
    return { direct: (s) => s.environments.create(body, s.caller), http: { method: 'POST', path: '/environments', body }, show: { kind: 'json' } };
  },
  'env list': () => ({
    direct: (s) => s.environments.list(), http: { method: 'GET', path: '/environments', answer: itemsOf },
    show: { kind: 'table', columns: ['id', 'name', 'frontendHost'], rows: (all: Record<string, unknown>[]) => all },
  }),
  'env settings': ({ operands: [id, json] }) => {
    const settings = parseJson(json, 'settings JSON');
    return { direct: (s) => s.environments.update(id!, { settings }), http: { method: 'PATCH', path: `/environments/${id}`, body: { settings } }, show: { kind: 'record' } };
  },
  'keys create': ({ operands: [id] }) => ({
    direct: (s) => s.environments.createSecretKey(id!, s.caller), http: { method: 'POST', path: `/environments/${id}/secret-keys` }, show: { kind: 'json' },
  }),
  'keys revoke': ({ operands: [keyId] }) => ({
    direct: (s) => s.environments.revokeSecretKey(keyId!, s.caller), http: { method: 'DELETE', path: `/secret-keys/${keyId}` },
    show: { kind: 'done', message: `Revoked key ${keyId}.` },
  }),
  outbox: ({ operands: [id], options }) => ({
    direct: async (s) => { await s.environments.get(id!); return s.outbox.list(id!, options.to as string | undefined); },
    http: { method: 'GET', path: `/environments/${id}/outbox${query({ to: options.to as string | undefined })}`, answer: itemsOf },
    show: { kind: 'table', columns: ['createdAt', 'to', 'subject'], rows: (all: Record<string, unknown>[]) => all },
  }),
  'role-sets create': ({ operands: [id], options }) => {
    const body = checked(CreateRoleSetBody, { name: options.name, roles: parseRoles(options.roles as string) }, 'role set');
    return { direct: (s) => s.organizations().createRoleSet(id!, body), http: { method: 'POST', path: `/environments/${id}/role-sets`, body }, show: { kind: 'record' } };
  },
  'role-sets list': ({ operands: [id] }) => ({
    direct: (s) => s.organizations().listRoleSets(id!), http: { method: 'GET', path: `/environments/${id}/role-sets` },
    show: { kind: 'table', columns: ['id', 'name', 'roles'], rows: (r: { items: { roles: { key: string }[] }[] }) => r.items.map((set) => ({ ...set, roles: set.roles.map((role) => role.key) })) },
  }),
  'signing-keys list': ({ operands: [id] }) => ({
    direct: (s) => s.signingKeys().list(id!), http: { method: 'GET', path: `/environments/${id}/signing-keys` }, show: signingKeysTable,
  }),
  'signing-keys rotate': ({ operands: [id] }) => ({
    direct: (s) => s.signingKeys().rotate(id!, s.caller), http: { method: 'POST', path: `/environments/${id}/signing-keys/rotate` }, show: signingKeysTable,
  }),
  'signing-keys revoke': ({ operands: [id, keyId] }) => ({
    direct: (s) => s.signingKeys().revoke(id!, keyId!, s.caller), http: { method: 'DELETE', path: `/environments/${id}/signing-keys/${keyId}` }, show: signingKeysTable,
  }),
  'oauth-providers list': ({ operands: [id] }) => ({
    direct: (s) => s.providers().listProviders(id!), http: { method: 'GET', path: `/environments/${id}/oauth-providers` },
    show: { kind: 'table', columns: ['id', 'type', 'name', 'clientId', 'enabled'], rows: itemsOf },
  }),
  'oauth-providers set': ({ operands: [id, providerId, json] }) => {
    const body = providerBody(json);
    return {
      direct: async (s) => (await s.providers().putProvider(id!, providerId!, body, s.caller)).provider,
      http: { method: 'PUT', path: `/environments/${id}/oauth-providers/${providerId}`, body }, show: { kind: 'record' },
    };
  },
  'oauth-providers delete': ({ operands: [id, providerId] }) => ({
    direct: (s) => s.providers().deleteProvider(id!, providerId!, s.caller), http: { method: 'DELETE', path: `/environments/${id}/oauth-providers/${providerId}` },
    show: { kind: 'done', message: `Deleted provider ${providerId}.` },
  }),
  'users list': ({ operands: [id], options }) => {
    const paging = page(options);
    const statuses = options.status as ('active' | 'banned' | 'deleted')[] | undefined;
    const emailSearch = options.emailSearch as string | undefined;
    return {
      direct: (s) => s.users().list(id!, { emailSearch, statuses }, paging),
      http: { environmentId: id, method: 'GET', path: `/users${query({ ...paging, emailSearch, status: statuses })}` },
      show: pageTable(USER_COLUMNS),
    };
  },
  'users get': ({ operands: [id, userId] }) => ({
    direct: (s) => s.users().get(id!, userId!), http: { environmentId: id, method: 'GET', path: `/users/${userId}` }, show: { kind: 'record' },
  }),
  'users create': ({ operands: [id], options }) => {
    const body = checked(CreateUserBody, Object.fromEntries(Object.entries({
      email: options.email, password: options.password ?? process.env.GATEHOUSE_USER_PASSWORD, firstName: options.firstName, lastName: options.lastName,
    }).filter(([, v]) => v !== undefined)), 'user');
    return { direct: (s) => s.users().create(id!, body, s.caller), http: { environmentId: id, method: 'POST', path: '/users', body }, show: { kind: 'record' } };
  },
  'users ban': ({ operands: [id, userId] }) => ({
    direct: (s) => s.users().ban(id!, userId!, s.caller), http: { environmentId: id, method: 'POST', path: `/users/${userId}/ban` }, show: { kind: 'record' },
  }),
  'users unban': ({ operands: [id, userId] }) => ({
    direct: (s) => s.users().unban(id!, userId!, s.caller), http: { environmentId: id, method: 'POST', path: `/users/${userId}/unban` }, show: { kind: 'record' },
  }),
  'organizations list': ({ operands: [id], options }) => {
    const paging = page(options);
    const name = options.name as string | undefined;
    return {
      direct: (s) => s.organizations().list(id!, { name }, paging),
      http: { environmentId: id, method: 'GET', path: `/organizations${query({ ...paging, name })}` },
      show: pageTable(['id', 'name', 'slug', 'createdAt']),
    };
  },
  'organizations get': ({ operands: [id, organizationId] }) => ({
    direct: (s) => s.organizations().get(id!, organizationId!), http: { environmentId: id, method: 'GET', path: `/organizations/${organizationId}` }, show: { kind: 'record' },
  }),
  'organizations members': ({ operands: [id, organizationId], options }) => {
    const paging = page(options);
    return {
      direct: (s) => s.organizations().listMembers(id!, organizationId!, paging),
      http: { environmentId: id, method: 'GET', path: `/organizations/${organizationId}/members${query(paging)}` },
      show: pageTable(['userId', 'role', 'roleName', 'joinedAt']),
    };
  },
  'allowed-origins list': ({ operands: [id] }) => ({
    direct: (s) => s.environments.getAllowedOrigins(id!), http: { environmentId: id, method: 'GET', path: '/allowed-origins' }, show: originsTable,
  }),
  'allowed-origins add': ({ operands: [id, ...origins] }) => originsChange(id!, (current) => [...current, ...origins]),
  'allowed-origins remove': ({ operands: [id, ...origins] }) => originsChange(id!, (current) => current.filter((o) => !origins.includes(o))),
  'operators create': ({ options, config }) => {
    const password = (options.password as string | undefined) ?? process.env.GATEHOUSE_OPERATOR_PASSWORD;
    const body = checked(CreateOperatorBody, { email: options.email, ...(password !== undefined && { password }) }, 'operator');
    const baseUrl = config.baseUrl ?? `http://localhost:${config.port}`;
    return { direct: (s) => s.operators().create(body, s.caller, baseUrl), http: { method: 'POST', path: '/operators', body }, show: { kind: 'record' } };
  },
  'operators list': ({ options }) => {
    const paging = page(options);
    return {
      direct: (s) => s.operators().list(paging), http: { method: 'GET', path: `/operators${query(paging)}` },
      show: pageTable(['id', 'email', 'status', 'createdAt']),
    };
  },
  migrate: () => ({ direct: async () => undefined, show: { kind: 'done', message: 'Database is up to date.' } }),
};

const signingKeysTable: Show = { kind: 'table', columns: ['id', 'status', 'createdAt'], rows: itemsOf };
const originsTable: Show = { kind: 'table', columns: ['origin'], rows: (r: { origins: string[] }) => r.origins.map((origin) => ({ origin })) };

/**
 * The allowed origins, changed: read, then the whole list written back (the Server API replaces the list). Two
 * operators changing one environment's list at the same instant may lose one change; it is a setting, not an invariant.
 */
function originsChange(environmentId: string, change: (current: string[]) => string[]): Action {
  return {
    direct: async (s) => s.environments.setAllowedOrigins(environmentId, change((await s.environments.getAllowedOrigins(environmentId)).origins)),
    http: { environmentId, method: 'PUT', path: '/allowed-origins', body: (current: { origins: string[] }) => ({ origins: change(current.origins) }) },
    show: originsTable,
  };
}
