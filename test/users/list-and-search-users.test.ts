import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { createUser, expectProblem, objectOfSize } from './support.js';

interface Page { items: { id: string; email: string | null; status: string }[]; nextCursor: string | null; hasMore: boolean }

describe('GET /api/server/v1/users and POST /api/server/v1/users/search', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  /** Creates passwordless users one after another (so in id order) and returns their ids. */
  async function createUsers(env: TestEnv, count: number, prefix = 'user'): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push((await createUser(t, env, { email: `${prefix}-${String(i).padStart(3, '0')}@example.com` })).id);
    return ids;
  }

  const emailsOf = (page: Page) => page.items.map((u) => u.email);

  async function listed(env: TestEnv, query: string): Promise<Page> {
    const res = await t.server(env).get(`/users${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }

  async function searched(env: TestEnv, body: Record<string, unknown>, query = ''): Promise<Page> {
    const res = await t.server(env).post(`/users/search${query}`, body);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }

  describe('paging', () => {
    let env: TestEnv;
    let ids: string[];
    beforeAll(async () => {
      env = await t.given.environment();
      ids = await createUsers(env, 25);
    });

    it('answers the first 20 users in ascending id order by default, with a cursor to the next page', async () => {
      const page = await listed(env, '');
      expect(page.items.map((u) => u.id)).toEqual(ids.slice(0, 20));
      expect(page).toMatchObject({ hasMore: true, nextCursor: ids[19] });
    });

    it('answers users in the full Server API form, private metadata included', async () => {
      const page = await listed(env, '?limit=1');
      expect(page.items[0]).toEqual((await t.server(env).get(`/users/${ids[0]}`)).json());
      expect(Object.keys(page.items[0])).toContain('privateMetadata');
    });

    it('walks every user exactly once, in ascending id order, and ends with nextCursor null and hasMore false', async () => {
      const seen: string[] = [];
      const pages: Page[] = [];
      let cursor: string | null = null;
      do {
        const page: Page = await listed(env, `?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
        pages.push(page);
        seen.push(...page.items.map((u) => u.id));
        cursor = page.nextCursor;
      } while (cursor && pages.length < 10);

      expect(pages.map((p) => p.items.length)).toEqual([7, 7, 7, 4]);
      expect(pages.map((p) => p.hasMore)).toEqual([true, true, true, false]);
      expect(pages.map((p) => p.nextCursor)).toEqual([ids[6], ids[13], ids[20], null]);
      expect(seen).toEqual(ids);
      expect(new Set(seen).size).toBe(25);
    });

    it('ends on a page that is exactly full without promising an empty page after it', async () => {
      const last = await listed(env, `?limit=5&cursor=${ids[19]}`);
      expect(last.items.map((u) => u.id)).toEqual(ids.slice(20));
      expect(last).toMatchObject({ hasMore: false, nextCursor: null });
    });

    it('accepts the limits 1 and 100', async () => {
      expect((await listed(env, '?limit=1')).items).toHaveLength(1);
      const all = await listed(env, '?limit=100');
      expect(all.items).toHaveLength(25);
      expect(all).toMatchObject({ hasMore: false, nextCursor: null });
    });

    it.each(['0', '101', '-1', '2.5', 'ten'])('answers 400 invalid_request for limit=%s', async (limit) => {
      const body = expectProblem(await t.server(env).get(`/users?limit=${limit}`), 400, 'invalid_request');
      expect(body.properties.errors[0].path).toBe('/querystring/limit');
    });

    it('answers 400 invalid_request for a cursor that is not a uuid', async () => {
      const body = expectProblem(await t.server(env).get('/users?cursor=abc'), 400, 'invalid_request');
      expect(body.properties.errors[0].path).toBe('/querystring/cursor');
    });

    it('answers 400 invalid_request for an unknown query parameter', async () => {
      expectProblem(await t.server(env).get('/users?role=admin'), 400, 'invalid_request');
    });

    it('pages the search the same way, 20 by default, with limit and cursor in the query', async () => {
      const byDefault = await searched(env, {});
      expect(byDefault.items.map((u) => u.id)).toEqual(ids.slice(0, 20));
      expect(byDefault).toMatchObject({ hasMore: true, nextCursor: ids[19] });
      const first = await searched(env, {}, '?limit=10');
      const second = await searched(env, {}, `?limit=10&cursor=${first.nextCursor}`);
      expect([...first.items, ...second.items].map((u) => u.id)).toEqual(ids.slice(0, 20));
      expectProblem(await t.server(env).post('/users/search?limit=101', {}), 400, 'invalid_request');
      expectProblem(await t.server(env).post('/users/search?cursor=nope', {}), 400, 'invalid_request');
    });
  });

  describe('email search', () => {
    let env: TestEnv;
    beforeAll(async () => {
      env = await t.given.environment();
      for (const email of ['100%off@example.com', '100off@example.com', 'a_b@example.com', 'axb@example.com', 'Mixed.Case@Example.org']) {
        await createUser(t, env, { email });
      }
      await createUser(t, env, { email: 'other@example.net' });
    });

    it('matches a case-insensitive substring anywhere in the email', async () => {
      expect(emailsOf(await listed(env, '?emailSearch=MIXED.case@EXAMPLE'))).toEqual(['mixed.case@example.org']);
      expect(emailsOf(await listed(env, '?emailSearch=example.com'))).toEqual([
        '100%off@example.com', '100off@example.com', 'a_b@example.com', 'axb@example.com',
      ]);
    });

    it('treats % as a plain character', async () => {
      expect(emailsOf(await listed(env, `?emailSearch=${encodeURIComponent('100%')}`))).toEqual(['100%off@example.com']);
      expect(emailsOf(await listed(env, `?emailSearch=${encodeURIComponent('%')}`))).toEqual(['100%off@example.com']);
    });

    it('treats _ as a plain character', async () => {
      expect(emailsOf(await listed(env, '?emailSearch=a_b'))).toEqual(['a_b@example.com']);
      expect(emailsOf(await listed(env, '?emailSearch=_'))).toEqual(['a_b@example.com']);
    });

    it('treats \\ as a plain character rather than an escape', async () => {
      expect(emailsOf(await listed(env, `?emailSearch=${encodeURIComponent('a\\_b')}`))).toEqual([]);
      expect(emailsOf(await listed(env, `?emailSearch=${encodeURIComponent('\\')}`))).toEqual([]);
      expect(emailsOf(await searched(env, { emailSearch: '100\\%' }))).toEqual([]);
    });

    it('applies the same literal matching in the search body', async () => {
      expect(emailsOf(await searched(env, { emailSearch: 'A_B' }))).toEqual(['a_b@example.com']);
      expect(emailsOf(await searched(env, { emailSearch: '0%o' }))).toEqual(['100%off@example.com']);
    });

    it.each([
      ['empty', ''],
      ['blank', '   '],
      ['longer than 320 characters', 'a'.repeat(321)],
    ])('answers 400 invalid_request for an email search that is %s, in the query and in the search body', async (_case, value) => {
      const inQuery = expectProblem(await t.server(env).get(`/users?emailSearch=${encodeURIComponent(value)}`), 400, 'invalid_request');
      expect(inQuery.properties.errors[0].path).toBe('/querystring/emailSearch');
      const inBody = expectProblem(await t.server(env).post('/users/search', { emailSearch: value }), 400, 'invalid_request');
      expect(inBody.properties.errors[0].path).toBe('/body/emailSearch');
    });

    describe('a search made of several words', () => {
      let words: TestEnv;
      beforeAll(async () => {
        words = await t.given.environment();
        for (const email of ['ada.lovelace@example.com', 'ada.x.lovelace@example.com', 'lovelace.ada@example.com', 'ada-lovelace@example.com',
          'aaa.bbb.ccc.ddd.eee@example.com', 'eee.ddd.ccc.bbb.aaa@example.com']) {
          await createUser(t, words, { email });
        }
      });

      it('matches the words only in the order and with the separators of the search', async () => {
        expect(emailsOf(await listed(words, '?emailSearch=ada.lovelace'))).toEqual(['ada.lovelace@example.com']);
        expect(emailsOf(await searched(words, { emailSearch: 'Ada.Lovelace@Example.com' }))).toEqual(['ada.lovelace@example.com']);
        expect(emailsOf(await searched(words, { emailSearch: 'ada-lovelace' }))).toEqual(['ada-lovelace@example.com']);
        expect(emailsOf(await searched(words, { emailSearch: 'lovelace.ada' }))).toEqual(['lovelace.ada@example.com']);
      });

      it('matches a word that ends at a separator in the search inside longer words of the email too, as a substring', async () => {
        const domains = await t.given.environment();
        for (const email of ['x@acme1.com', 'y@acme12.com', 'z@xacme1.com']) await createUser(t, domains, { email });
        expect(emailsOf(await searched(domains, { emailSearch: 'acme1.com' }))).toEqual(['x@acme1.com', 'z@xacme1.com']);
        expect(emailsOf(await searched(domains, { emailSearch: '@acme1.com' }))).toEqual(['x@acme1.com']);
        expect(emailsOf(await searched(domains, { emailSearch: 'acme1' }))).toEqual(['x@acme1.com', 'y@acme12.com', 'z@xacme1.com']);
        expect(emailsOf(await searched(domains, { emailSearch: 'cme1.c' }))).toEqual(['x@acme1.com', 'z@xacme1.com']);
      });

      it('matches a search of more words than the index is asked for only where all of them stand together', async () => {
        expect(emailsOf(await searched(words, { emailSearch: 'bbb.ccc.ddd.eee@' }))).toEqual(['aaa.bbb.ccc.ddd.eee@example.com']);
        expect(emailsOf(await searched(words, { emailSearch: 'aaa.bbb.ccc.ddd.eee.fff' }))).toEqual([]);
      });

      it('matches a search without three letters or digits in a row anywhere in the email', async () => {
        expect(emailsOf(await searched(words, { emailSearch: '.x.' }))).toEqual(['ada.x.lovelace@example.com']);
        expect(emailsOf(await listed(words, '?emailSearch=a-l'))).toEqual(['ada-lovelace@example.com']);
        expect(emailsOf(await searched(words, { emailSearch: 'e@' }))).toEqual([
          'ada.lovelace@example.com', 'ada.x.lovelace@example.com', 'ada-lovelace@example.com', 'aaa.bbb.ccc.ddd.eee@example.com',
        ]);
      });
    });

    it('accepts an email search of exactly 320 characters', async () => {
      expect((await listed(env, `?emailSearch=${'a'.repeat(320)}`)).items).toEqual([]);
      expect((await searched(env, { emailSearch: 'a'.repeat(320) })).items).toEqual([]);
    });
  });

  describe('status filter', () => {
    let env: TestEnv;
    beforeAll(async () => {
      env = await t.given.environment();
      const [, banned, deleted] = await createUsers(env, 3, 'status');
      expect((await t.server(env).post(`/users/${banned}/ban`)).statusCode).toBe(200);
      expect((await t.server(env).delete(`/users/${deleted}`)).statusCode).toBe(204);
    });

    it('lists users of every status, deleted included, when no status is given', async () => {
      expect((await listed(env, '')).items.map((u) => [u.email, u.status])).toEqual([
        ['status-000@example.com', 'active'], ['status-001@example.com', 'banned'], ['status-002@example.com', 'deleted'],
      ]);
    });

    it('lists only users of the given status', async () => {
      expect(emailsOf(await listed(env, '?status=banned'))).toEqual(['status-001@example.com']);
      expect(emailsOf(await listed(env, '?status=deleted'))).toEqual(['status-002@example.com']);
    });

    it('ORs repeated status parameters', async () => {
      expect(emailsOf(await listed(env, '?status=banned&status=active'))).toEqual(['status-000@example.com', 'status-001@example.com']);
    });

    it('ANDs the status with the email search', async () => {
      expect(emailsOf(await listed(env, '?status=active&status=banned&emailSearch=001'))).toEqual(['status-001@example.com']);
      expect(emailsOf(await listed(env, '?status=active&emailSearch=001'))).toEqual([]);
    });

    it('answers 400 invalid_request for an unknown status', async () => {
      expectProblem(await t.server(env).get('/users?status=suspended'), 400, 'invalid_request');
    });

    it('filters by statuses in the search body, ORed', async () => {
      expect(emailsOf(await searched(env, { statuses: ['deleted', 'banned'] }))).toEqual(['status-001@example.com', 'status-002@example.com']);
      expect(emailsOf(await searched(env, { statuses: ['active'] }))).toEqual(['status-000@example.com']);
    });

    it('walks the users of several statuses in one id order, page by page, each exactly once', async () => {
      const mixed = await t.given.environment();
      const ids = await createUsers(mixed, 9, 'mixed');
      const statusOf = (i: number) => (['active', 'banned', 'deleted'] as const)[i % 3];
      for (const [i, id] of ids.entries()) {
        if (statusOf(i) === 'banned') expect((await t.server(mixed).post(`/users/${id}/ban`)).statusCode).toBe(200);
        if (statusOf(i) === 'deleted') expect((await t.server(mixed).delete(`/users/${id}`)).statusCode).toBe(204);
      }
      const walk = async (statuses: string[]) => {
        const seen: string[] = [];
        let cursor: string | null = null;
        do {
          const page: Page = await searched(mixed, { statuses }, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
          expect(page.hasMore).toBe(page.nextCursor !== null);
          seen.push(...page.items.map((u) => u.id));
          cursor = page.nextCursor;
        } while (cursor);
        return seen;
      };

      expect(await walk(['deleted', 'banned'])).toEqual(ids.filter((_, i) => statusOf(i) !== 'active'));
      expect(await walk(['banned', 'active', 'deleted'])).toEqual(ids);
      expect((await listed(mixed, `?status=banned&status=deleted&limit=3&cursor=${ids[1]}`)).items.map((u) => u.id)).toEqual([ids[2], ids[4], ids[5]]);
    });

    it('answers 400 invalid_request for repeated or unknown statuses in the search body', async () => {
      expectProblem(await t.server(env).post('/users/search', { statuses: ['active', 'active'] }), 400, 'invalid_request');
      expectProblem(await t.server(env).post('/users/search', { statuses: ['ACTIVE'] }), 400, 'invalid_request');
    });
  });

  describe('metadata containment in the search body', () => {
    let env: TestEnv;
    beforeAll(async () => {
      env = await t.given.environment();
      await createUser(t, env, {
        email: 'a@example.com',
        publicMetadata: { plan: 'pro', tags: ['x', 'y', 'z'], profile: { country: 'dk', city: 'Aarhus' } },
        privateMetadata: { tier: 1, flags: { beta: true } },
      });
      const b = await createUser(t, env, { email: 'b@example.com', publicMetadata: { plan: 'pro', tags: ['y'] }, privateMetadata: { tier: '1' } });
      await createUser(t, env, { email: 'c@example.com', publicMetadata: { plan: 'free' }, unsafeMetadata: { plan: 'pro' } });
      expect((await t.server(env).post(`/users/${b.id}/ban`)).statusCode).toBe(200);
    });

    it('matches users whose public metadata contains the filter', async () => {
      expect(emailsOf(await searched(env, { publicMetadata: { plan: 'pro' } }))).toEqual(['a@example.com', 'b@example.com']);
      expect(emailsOf(await searched(env, { publicMetadata: { plan: 'enterprise' } }))).toEqual([]);
    });

    it('lets nested objects carry extra keys', async () => {
      expect(emailsOf(await searched(env, { publicMetadata: { profile: { country: 'dk' } } }))).toEqual(['a@example.com']);
      expect(emailsOf(await searched(env, { publicMetadata: { profile: { country: 'se' } } }))).toEqual([]);
    });

    it('lets arrays carry extra values in any order', async () => {
      expect(emailsOf(await searched(env, { publicMetadata: { tags: ['z', 'x'] } }))).toEqual(['a@example.com']);
      expect(emailsOf(await searched(env, { publicMetadata: { tags: ['y'] } }))).toEqual(['a@example.com', 'b@example.com']);
      expect(emailsOf(await searched(env, { publicMetadata: { tags: ['x', 'w'] } }))).toEqual([]);
    });

    it('tells the number 1 from the string "1"', async () => {
      expect(emailsOf(await searched(env, { privateMetadata: { tier: 1 } }))).toEqual(['a@example.com']);
      expect(emailsOf(await searched(env, { privateMetadata: { tier: '1' } }))).toEqual(['b@example.com']);
      expect(emailsOf(await searched(env, { privateMetadata: { flags: { beta: 'true' } } }))).toEqual([]);
    });

    it('searches the private bag only for privateMetadata and never the unsafe bag', async () => {
      expect(emailsOf(await searched(env, { privateMetadata: { plan: 'pro' } }))).toEqual([]);
      expect(emailsOf(await searched(env, { publicMetadata: { plan: 'free' } }))).toEqual(['c@example.com']);
    });

    it('matches every user for an empty metadata filter or null filters', async () => {
      const all = ['a@example.com', 'b@example.com', 'c@example.com'];
      expect(emailsOf(await searched(env, {}))).toEqual(all);
      expect(emailsOf(await searched(env, { publicMetadata: {} }))).toEqual(all);
      expect(emailsOf(await searched(env, { emailSearch: null, publicMetadata: null, privateMetadata: null }))).toEqual(all);
    });

    it('ANDs every supplied filter', async () => {
      expect(emailsOf(await searched(env, { publicMetadata: { plan: 'pro' }, statuses: ['banned'] }))).toEqual(['b@example.com']);
      expect(emailsOf(await searched(env, { publicMetadata: { plan: 'pro' }, privateMetadata: { tier: 1 } }))).toEqual(['a@example.com']);
      expect(emailsOf(await searched(env, { publicMetadata: { plan: 'pro' }, emailSearch: 'b@' }))).toEqual(['b@example.com']);
      expect(emailsOf(await searched(env, { publicMetadata: { plan: 'pro' }, privateMetadata: { tier: 1 }, statuses: ['banned'] }))).toEqual([]);
    });

    it.each([
      ['an unknown filter', { unsafeMetadata: { plan: 'pro' } }],
      ['an array as metadata filter', { publicMetadata: ['pro'] }],
      ['an empty string as metadata filter', { publicMetadata: '' }],
      ['false as metadata filter', { privateMetadata: false }],
      ['a status list that is not an array of statuses', { statuses: [1] }],
    ])('answers 400 invalid_request for %s instead of ignoring it', async (_case, body) => {
      expectProblem(await t.server(env).post('/users/search', body), 400, 'invalid_request');
    });

    it('answers 400 metadata_too_large for metadata filters over 8 KB together', async () => {
      const res = await t.server(env).post('/users/search', { publicMetadata: objectOfSize(4096), privateMetadata: objectOfSize(4097) });
      expect(expectProblem(res, 400, 'metadata_too_large').properties.bytes).toBe(8193);
      expect((await searched(env, { publicMetadata: objectOfSize(4096), privateMetadata: objectOfSize(4096) })).items).toEqual([]);
    });
  });

  it("never lists or finds another environment's users", async () => {
    const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
    const own = await createUser(t, mine, { email: 'shared@example.com', publicMetadata: { plan: 'pro' }, privateMetadata: { team: 1 } });
    for (let i = 0; i < 3; i++) {
      await createUser(t, theirs, { email: i === 0 ? 'shared@example.com' : `other${i}@example.com`, publicMetadata: { plan: 'pro' }, privateMetadata: { team: 1 } });
    }

    const ownOnly = [own.id];
    expect((await listed(mine, '')).items.map((u) => u.id)).toEqual(ownOnly);
    expect((await listed(mine, '?emailSearch=example.com&status=active')).items.map((u) => u.id)).toEqual(ownOnly);
    expect((await searched(mine, { publicMetadata: { plan: 'pro' }, privateMetadata: { team: 1 } })).items.map((u) => u.id)).toEqual(ownOnly);
    expect((await searched(mine, { emailSearch: 'other' })).items).toEqual([]);
    expect((await listed(theirs, '')).items).toHaveLength(3);
  });
});
