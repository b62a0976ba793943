import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { DAY_MS, expectProblem, invite, invitingEnvironment, objectOfSize, SUMMARY_KEYS } from './support.js';
import { PASSWORD } from '../helpers/given.js';

interface Summary { id: string; email: string; status: string }
interface Page { items: Summary[]; nextCursor: string | null; hasMore: boolean }

describe('GET /api/server/v1/invitations and POST /api/server/v1/invitations/search', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  async function listed(env: TestEnv, query: string): Promise<Page> {
    const res = await t.server(env).get(`/invitations${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }
  async function searched(env: TestEnv, body: Record<string, unknown>, query = ''): Promise<Page> {
    const res = await t.server(env).post(`/invitations/search${query}`, body);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }
  const emails = (page: Page) => page.items.map((i) => i.email);

  describe('statuses, including expiry that no job has stored yet', () => {
    let env: TestEnv;
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      env = await invitingEnvironment(t);
      for (const name of ['pending', 'accepted', 'revoked', 'expiring']) {
        const { invitation, token } = await invite(t, env, { email: `${name}@example.com`, expiresInDays: name === 'expiring' ? 1 : 30 });
        ids[name] = invitation.id;
        if (name === 'accepted') {
          const res = await t.client(env).post('/auth/invitation/password-signup', { token, password: PASSWORD, legalConsentAccepted: true });
          expect(res.statusCode, res.body).toBe(201);
        }
        if (name === 'revoked') expect((await t.server(env).post(`/invitations/${invitation.id}/revoke`)).statusCode).toBe(200);
      }
      t.clock.advance(DAY_MS + 1);
    });

    it('reports a PENDING invitation past expiresAt as EXPIRED in get, list and search, while the row still says PENDING', async () => {
      const row = await t.db.selectFrom('invitations').select('status').where('id', '=', ids.expiring).executeTakeFirstOrThrow();
      expect(row.status).toBe('PENDING');
      expect((await t.server(env).get(`/invitations/${ids.expiring}`)).json().status).toBe('EXPIRED');
      expect((await listed(env, '')).items.map((i) => i.status)).toEqual(['PENDING', 'ACCEPTED', 'REVOKED', 'EXPIRED']);
      expect(emails(await searched(env, { statuses: ['EXPIRED'] }))).toEqual(['expiring@example.com']);
      expect(emails(await searched(env, { statuses: ['PENDING'] }))).toEqual(['pending@example.com']);
      expect(emails(await listed(env, '?status=EXPIRED'))).toEqual(['expiring@example.com']);
    });

    it('ORs the statuses within the filter', async () => {
      expect(emails(await searched(env, { statuses: ['ACCEPTED', 'EXPIRED'] }))).toEqual(['accepted@example.com', 'expiring@example.com']);
      expect(emails(await searched(env, { statuses: ['PENDING', 'EXPIRED'] }))).toEqual(['pending@example.com', 'expiring@example.com']);
      expect(emails(await listed(env, '?status=REVOKED&status=PENDING'))).toEqual(['pending@example.com', 'revoked@example.com']);
    });

    it('answers the same once the maintenance sweep has stored EXPIRED', async () => {
      const { createInvitationsStore } = await import('../../src/invitations/store.js');
      await createInvitationsStore(t.db).expireOverdue(t.clock.now());
      const row = await t.db.selectFrom('invitations').select('status').where('id', '=', ids.expiring).executeTakeFirstOrThrow();
      expect(row.status).toBe('EXPIRED');
      expect(emails(await searched(env, { statuses: ['EXPIRED'] }))).toEqual(['expiring@example.com']);
      expect(emails(await searched(env, { statuses: ['PENDING'] }))).toEqual(['pending@example.com']);
    });

    it('never carries metadata in list or search results', async () => {
      for (const page of [await listed(env, ''), await searched(env, {})]) {
        for (const item of page.items) expect(Object.keys(item).sort()).toEqual(SUMMARY_KEYS);
      }
    });
  });

  describe('email substring', () => {
    let env: TestEnv;
    beforeAll(async () => {
      env = await invitingEnvironment(t);
      for (const email of ['alice@example.com', 'bob_smith@example.com', 'bobxsmith@example.com', '100%real@example.com', '100xreal@example.com', 'carol@other.org']) {
        await invite(t, env, { email });
      }
    });

    it('matches a case-insensitive substring', async () => {
      expect(emails(await searched(env, { emailSearch: 'EXAMPLE.COM' }))).toHaveLength(5);
      expect(emails(await listed(env, '?search=ALIce'))).toEqual(['alice@example.com']);
    });

    it('treats %, _ and \\ as plain characters', async () => {
      expect(emails(await searched(env, { emailSearch: 'bob_' }))).toEqual(['bob_smith@example.com']);
      expect(emails(await searched(env, { emailSearch: '100%' }))).toEqual(['100%real@example.com']);
      // Unescaped, "b\ob" would be a LIKE escape matching "bob"; emails cannot hold a backslash, so nothing matches.
      expect(emails(await searched(env, { emailSearch: 'bob' }))).toHaveLength(2);
      expect(emails(await searched(env, { emailSearch: 'b\\ob' }))).toEqual([]);
      expect(emails(await searched(env, { emailSearch: '%' }))).toEqual(['100%real@example.com']);
      expect(emails(await searched(env, { emailSearch: '_' }))).toEqual(['bob_smith@example.com']);
    });

    it.each([['blank', '   '], ['empty', ''], ['over 320 characters', 'x'.repeat(321)]])('refuses a %s emailSearch with 400', async (_case, emailSearch) => {
      const body = expectProblem(await t.server(env).post('/invitations/search', { emailSearch }), 400, 'invalid_request');
      expect(body.properties.errors[0].path).toBe('/body/emailSearch');
      expectProblem(await t.server(env).get(`/invitations?search=${encodeURIComponent(emailSearch)}`), 400, 'invalid_request');
    });

    it('accepts an emailSearch of exactly 320 characters and null as no filter', async () => {
      expect((await searched(env, { emailSearch: 'x'.repeat(320) })).items).toEqual([]);
      expect((await searched(env, { emailSearch: null })).items).toHaveLength(6);
    });
  });

  describe('metadata containment', () => {
    let env: TestEnv;
    const meta: Record<string, unknown>[] = [
      { plan: 'pro', team: { id: 7, region: 'eu', tags: ['a', 'b', 'c'] } },
      { plan: 'pro', team: { id: '7' } },
      { plan: 'free', flag: null, list: [1, [2, 3]] },
      { plan: 'free', nested: { deep: { deeper: true, other: 1 } } },
    ];
    beforeAll(async () => {
      env = await invitingEnvironment(t);
      for (const [i, publicMetadata] of meta.entries()) {
        await invite(t, env, { email: `m${i}@example.com`, publicMetadata, privateMetadata: { crm: { tier: i % 2 ? 'gold' : 'silver', id: i } } });
      }
    });
    const pub = async (publicMetadata: unknown) => emails(await searched(env, { publicMetadata }));

    it('lets nested objects carry extra keys', async () => {
      expect(await pub({ team: { region: 'eu' } })).toEqual(['m0@example.com']);
      expect(await pub({ nested: { deep: { deeper: true } } })).toEqual(['m3@example.com']);
      expect(await pub({})).toHaveLength(4);
    });

    it('lets arrays carry extra values in any order, nested arrays included', async () => {
      expect(await pub({ team: { tags: ['c', 'a'] } })).toEqual(['m0@example.com']);
      expect(await pub({ team: { tags: ['d'] } })).toEqual([]);
      expect(await pub({ list: [[3]] })).toEqual(['m2@example.com']);
    });

    it('matches JSON types exactly: 7 is not "7", and null matches only null', async () => {
      expect(await pub({ team: { id: 7 } })).toEqual(['m0@example.com']);
      expect(await pub({ team: { id: '7' } })).toEqual(['m1@example.com']);
      expect(await pub({ flag: null })).toEqual(['m2@example.com']);
      expect(await pub({ plan: null })).toEqual([]);
    });

    it('searches private metadata too, without ever returning it', async () => {
      const page = await searched(env, { privateMetadata: { crm: { tier: 'gold' } } });
      expect(emails(page)).toEqual(['m1@example.com', 'm3@example.com']);
      expect(page.items[0]).not.toHaveProperty('privateMetadata');
    });

    it('ANDs every supplied dimension', async () => {
      expect(emails(await searched(env, { publicMetadata: { plan: 'pro' }, privateMetadata: { crm: { tier: 'silver' } } }))).toEqual(['m0@example.com']);
      expect(emails(await searched(env, { publicMetadata: { plan: 'free' }, emailSearch: 'm3' }))).toEqual(['m3@example.com']);
      expect(emails(await searched(env, { publicMetadata: { plan: 'free' }, statuses: ['REVOKED'] }))).toEqual([]);
    });

    it('refuses metadata filters over 8 KB together with 400 metadata_too_large', async () => {
      expectProblem(await t.server(env).post('/invitations/search', { publicMetadata: objectOfSize(5000), privateMetadata: objectOfSize(3193) }), 400, 'metadata_too_large');
    });

    it('refuses a metadata filter that is not an object with 400', async () => {
      expectProblem(await t.server(env).post('/invitations/search', { publicMetadata: [1] }), 400, 'invalid_request');
    });
  });

  describe('request limits', () => {
    let env: TestEnv;
    beforeAll(async () => { env = await invitingEnvironment(t); });

    it('refuses an unknown filter with 400 naming it', async () => {
      const body = expectProblem(await t.server(env).post('/invitations/search', { email: 'x' }), 400, 'invalid_request');
      expect(body.properties.errors).toEqual([{ path: '/body/email', message: expect.any(String) }]);
    });

    it('refuses an unknown status and duplicate statuses with 400', async () => {
      expectProblem(await t.server(env).post('/invitations/search', { statuses: ['pending'] }), 400, 'invalid_request');
      expectProblem(await t.server(env).post('/invitations/search', { statuses: ['PENDING', 'PENDING'] }), 400, 'invalid_request');
      expectProblem(await t.server(env).get('/invitations?status=GONE'), 400, 'invalid_request');
    });

    it.each(['0', '101', '-1', 'abc', '2.5'])('refuses limit=%s with 400 on search and list', async (limit) => {
      expectProblem(await t.server(env).post(`/invitations/search?limit=${limit}`, {}), 400, 'invalid_request');
      expectProblem(await t.server(env).get(`/invitations?limit=${limit}`), 400, 'invalid_request');
    });

    it('refuses a cursor that is not a uuid with 400', async () => {
      expectProblem(await t.server(env).post('/invitations/search?cursor=abc', {}), 400, 'invalid_request');
      expectProblem(await t.server(env).get('/invitations?cursor=abc'), 400, 'invalid_request');
    });

    it('refuses a body over 24 KiB with 413 payload_too_large, and takes one just under', async () => {
      const padding = (bytes: number) => JSON.stringify({ emailSearch: 'x', publicMetadata: null, privateMetadata: null }).length + bytes;
      const over = `{"emailSearch":"x","publicMetadata":null,"privateMetadata":null}${' '.repeat(24 * 1024 - padding(0) + 1)}`;
      const under = over.slice(0, -2);
      const headers = { 'content-type': 'application/json' };
      expectProblem(await t.server(env).post('/invitations/search', over, { headers }), 413, 'payload_too_large');
      expect((await t.server(env).post('/invitations/search', under, { headers })).statusCode).toBe(200);
    });
  });

  describe('paging and tenancy', () => {
    let env: TestEnv;
    let other: TestEnv;
    let ids: string[];
    beforeAll(async () => {
      env = await invitingEnvironment(t);
      other = await invitingEnvironment(t);
      ids = [];
      for (let i = 0; i < 25; i++) {
        ids.push((await invite(t, env, { email: `p${String(i).padStart(2, '0')}@example.com`, publicMetadata: { shared: true } })).invitation.id);
        await invite(t, other, { email: `p${String(i).padStart(2, '0')}@example.com`, publicMetadata: { shared: true } });
      }
    });

    it('answers 20 by default in ascending id order with a cursor, and walks every invitation exactly once', async () => {
      const first = await searched(env, {});
      expect(first.items.map((i) => i.id)).toEqual(ids.slice(0, 20));
      expect(first).toMatchObject({ hasMore: true, nextCursor: ids[19] });
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Page = await listed(env, `?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
        seen.push(...page.items.map((i) => i.id));
        cursor = page.nextCursor;
        if (!page.hasMore) expect(cursor).toBeNull();
      } while (cursor);
      expect(seen).toEqual(ids);
    });

    it("never returns another environment's invitations, whatever the filter", async () => {
      for (const page of [await searched(env, { publicMetadata: { shared: true } }, '?limit=100'), await listed(env, '?limit=100&search=p0')]) {
        expect(page.items.every((i) => ids.includes(i.id))).toBe(true);
      }
      expect((await searched(env, { publicMetadata: { shared: true } }, '?limit=100')).items).toHaveLength(25);
    });
  });
});
