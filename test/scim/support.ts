import type { LightMyRequestResponse } from 'fastify';
import { uuidv7 } from 'uuidv7';
import { expect } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
export const PATCH_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const LIST_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
export const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';

export interface TestDirectory { id: string; token: string; organizationId: string }

/**
 * The organization has verified the domain, written as a domain check leaves it (test/organization-domains proves
 * the check itself through DNS): a directory provisions only addresses at its organization's verified domains.
 */
export async function givenVerifiedDomain(t: TestApp, env: TestEnv, organizationId: string, domain: string) {
  const now = t.clock.now();
  await t.db.insertInto('organization_domains').values({
    environment_id: env.id, id: uuidv7(), organization_id: organizationId, domain, enrollment: 'none',
    verification_token: `gatehouse-domain-verification=${uuidv7()}`, verified_at: now, created_at: now, updated_at: now,
  }).onConflict((oc) => oc.columns(['environment_id', 'organization_id', 'domain']).doNothing()).execute();
}

/**
 * An organization of the environment with a SCIM directory, through the Server API; the organization has verified
 * `domain` (example.com unless given; null for none), so the directory may provision addresses there.
 */
export async function givenDirectory(t: TestApp, env: TestEnv, body: Record<string, unknown> = {}, organizationId?: string, domain: string | null = 'example.com'): Promise<TestDirectory> {
  const orgId = organizationId ?? (await t.server(env).post('/organizations', { name: 'Acme' })).json().id;
  if (domain) await givenVerifiedDomain(t, env, orgId, domain);
  const res = await t.server(env).post(`/organizations/${orgId}/directories`, { name: 'Okta', ...body });
  expect(res.statusCode, res.body).toBe(201);
  return { id: res.json().id, token: res.json().token, organizationId: orgId };
}

/** A SCIM client of the directory, as an identity provider calls it: bearer token, application/scim+json bodies. */
export function scim(t: TestApp, directory: { id: string; token: string }) {
  const send = async (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<LightMyRequestResponse> => {
    const res = await t.app.inject({
      method, url: `/scim/v2/${directory.id}${path}`,
      headers: { authorization: `Bearer ${directory.token}`, ...(body !== undefined && { 'content-type': 'application/scim+json' }) },
      ...(body !== undefined && { payload: JSON.stringify(body) }),
    });
    await t.app.settled();
    return res;
  };
  return {
    get: (path: string) => send('GET', path),
    post: (path: string, body: unknown) => send('POST', path, body),
    put: (path: string, body: unknown) => send('PUT', path, body),
    patch: (path: string, operations: unknown[]) => send('PATCH', path, { schemas: [PATCH_SCHEMA], Operations: operations }),
    delete: (path: string) => send('DELETE', path),
  };
}

/** Asserts a SCIM error (RFC 7644 §3.12): its status as a string and, when given, its scimType. */
export function expectScimError(res: LightMyRequestResponse, status: number, scimType?: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/scim\+json/);
  const body = res.json();
  expect(body.schemas).toEqual([ERROR_SCHEMA]);
  expect(body.status).toBe(String(status));
  expect(body.detail).toEqual(expect.any(String));
  if (scimType) expect(body.scimType).toBe(scimType);
  return body;
}

export const scimUser = (userName: string, extra: Record<string, unknown> = {}) => ({
  schemas: [USER_SCHEMA], userName, name: { givenName: 'Ada', familyName: 'Lovelace' },
  emails: [{ value: userName, type: 'work', primary: true }], active: true, ...extra,
});
