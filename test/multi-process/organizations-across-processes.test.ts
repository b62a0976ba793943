import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServerPair, type ServerPair } from '../helpers/server-pair.js';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

describe.skipIf(!TEST_DATABASE_URL)('organization owners with several server processes on one PostgreSQL (needs TEST_DATABASE_URL)', () => {
  let pair: ServerPair;
  beforeAll(async () => { pair = await startServerPair(TEST_DATABASE_URL!); });
  afterAll(() => pair?.stop());

  it('keeps exactly one owner when eight owners step down or are removed at once, spread over every process', async () => {
    const env = await pair.environment();
    const owners = await Promise.all(Array.from({ length: 8 }, async () => (await pair.user(env)).id));
    const org = (await pair.serverApi(pair.a, env, 'POST', '/organizations', { name: 'Acme', createdBy: owners[0] })).json();
    for (const id of owners.slice(1)) {
      expect((await pair.serverApi(pair.a, env, 'POST', `/organizations/${org.id}/members`, { userId: id, role: 'owner' })).status).toBe(201);
    }

    const results = await Promise.all(owners.map((id, i) => {
      const server = pair.roundRobin(i);
      const path = `/organizations/${org.id}/members/${id}`;
      return i % 3 === 0 ? pair.serverApi(server, env, 'DELETE', path) : pair.serverApi(server, env, 'PATCH', path, { role: 'member' });
    }));

    const refused = results.filter((r) => r.status === 409);
    expect(refused).toHaveLength(1);
    expect(refused[0]!.json().properties.code).toBe('last_owner');
    expect(results.filter((r) => r.status === 200 || r.status === 204)).toHaveLength(7);
    const members = (await pair.serverApi(pair.b, env, 'GET', `/organizations/${org.id}/members?limit=100`)).json().items as { role: string }[];
    expect(members.filter((m) => m.role === 'owner')).toHaveLength(1);
  });
});
