import { expect } from 'vitest';
import type { TestApp, TestEnv } from '../helpers/app.js';

export { expectProblem } from '../helpers/problem.js';
export { MISSING_ID, objectOfSize } from '../users/support.js';

export const ORGANIZATION_KEYS = ['createdAt', 'id', 'name', 'privateMetadata', 'publicMetadata', 'roleSetId', 'slug'];
export const MEMBER_KEYS = ['joinedAt', 'organizationId', 'privateMetadata', 'publicMetadata', 'role', 'roleName', 'userId'];

/** Creates an organization through the Server API (with `createdBy`, its owner); fails the test on anything but 201. */
export async function createOrganization(t: TestApp, env: TestEnv, body: Record<string, unknown> = {}) {
  const res = await t.server(env).post('/organizations', { name: 'Acme', ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** Adds a member through the Server API; fails the test on anything but 201. */
export async function addMember(t: TestApp, env: TestEnv, organizationId: string, userId: string, role = 'member') {
  const res = await t.server(env).post(`/organizations/${organizationId}/members`, { userId, role });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** The stored memberships of an organization, by user id. */
export const storedRoles = async (t: TestApp, env: TestEnv, organizationId: string) =>
  Object.fromEntries((await t.db.selectFrom('organization_memberships').select(['user_id', 'role'])
    .where('environment_id', '=', env.id).where('organization_id', '=', organizationId).execute()).map((m) => [m.user_id, m.role]));
