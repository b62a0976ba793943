import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nameContains } from '../../src/users/store.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { createUser, expectProblem } from './support.js';

interface Page { items: { id: string; email: string | null; name: string | null }[]; nextCursor: string | null; hasMore: boolean }

describe('name search: GET /api/server/v1/users?nameSearch= and POST /api/server/v1/users/search {nameSearch}', () => {
  let t: TestApp;
  let env: TestEnv;
  beforeAll(async () => {
    t = await startTestApp();
    env = await t.given.environment();
    await createUser(t, env, { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', publicMetadata: { plan: 'pro' } });
    await createUser(t, env, { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', publicMetadata: { plan: 'free' } });
    await createUser(t, env, { email: 'soren@example.com', firstName: 'Søren', lastName: 'Kierkegaard' });
    // A display name that is neither first nor last name: each of the three is searched.
    const countess = await createUser(t, env, { email: 'countess@example.com', firstName: 'Augusta', lastName: 'Byron' });
    expect((await t.server(env).patch(`/users/${countess.id}`, { name: 'Countess of Lovelace' })).statusCode).toBe(200);
    const literal = await createUser(t, env, { email: 'literal@example.com' });
    expect((await t.server(env).patch(`/users/${literal.id}`, { name: '100% Real_Name \\o/' })).statusCode).toBe(200);
    // Only the email says lovelace: a name search reads names only.
    await createUser(t, env, { email: 'lovelace.fan@example.com' });
  });
  afterAll(() => t.close());

  async function listed(query: string, in_ = env): Promise<string[]> {
    const res = await t.server(in_).get(`/users${query}`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as Page).items.map((u) => u.email!);
  }

  async function searched(body: Record<string, unknown>, query = '', in_ = env): Promise<Page> {
    const res = await t.server(in_).post(`/users/search${query}`, body);
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }
  const emailsOf = (page: Page) => page.items.map((u) => u.email);

  it('matches a case-insensitive substring of the name, the first name or the last name, in id order', async () => {
    expect(await listed('?nameSearch=LOVELACE')).toEqual(['ada@example.com', 'countess@example.com']);
    expect(await listed('?nameSearch=ada%20love')).toEqual(['ada@example.com']);
    expect(await listed('?nameSearch=byron')).toEqual(['countess@example.com']);
    expect(await listed('?nameSearch=augus')).toEqual(['countess@example.com']);
    expect(await listed('?nameSearch=countess%20of')).toEqual(['countess@example.com']);
    expect(await listed('?nameSearch=opp')).toEqual(['grace@example.com']);
  });

  it('matches letters beyond ASCII, and searches of one or two characters', async () => {
    expect(await listed(`?nameSearch=${encodeURIComponent('søren')}`)).toEqual(['soren@example.com']);
    expect(await listed(`?nameSearch=${encodeURIComponent('ø')}`)).toEqual(['soren@example.com']);
    expect(await listed('?nameSearch=kI')).toEqual(['soren@example.com']);
  });

  it('never matches across two of the fields: "Lovelace Ada" is no one, though "Ada Lovelace" is', async () => {
    // The three fields of Ada read "ada lovelace", "ada" and "lovelace": joined without a line between them,
    // "lovelace ada" would stand in the text.
    expect(await listed('?nameSearch=lovelace%20ada')).toEqual([]);
    expect(await listed('?nameSearch=lovelaceada')).toEqual([]);
  });

  it('treats %, _ and \\ as plain characters', async () => {
    expect(await listed(`?nameSearch=${encodeURIComponent('100%')}`)).toEqual(['literal@example.com']);
    expect(await listed(`?nameSearch=${encodeURIComponent('%')}`)).toEqual(['literal@example.com']);
    expect(await listed('?nameSearch=l_n')).toEqual(['literal@example.com']);
    expect(await listed('?nameSearch=a_n')).toEqual([]);
    expect(await listed(`?nameSearch=${encodeURIComponent('\\o/')}`)).toEqual(['literal@example.com']);
    expect(await listed(`?nameSearch=${encodeURIComponent('% real')}`)).toEqual(['literal@example.com']);
    expect(await listed(`?nameSearch=${encodeURIComponent('1%0')}`)).toEqual([]);
  });

  it('reads names only, never the email', async () => {
    expect(await listed('?nameSearch=fan')).toEqual([]);
    expect(await listed('?emailSearch=lovelace')).toEqual(['lovelace.fan@example.com']);
  });

  it('ANDs the name search with the email search, the statuses and the metadata, in the search body too', async () => {
    expect(await listed('?nameSearch=lovelace&emailSearch=countess')).toEqual(['countess@example.com']);
    expect(emailsOf(await searched({ nameSearch: 'Lovelace', publicMetadata: { plan: 'pro' } }))).toEqual(['ada@example.com']);
    expect(emailsOf(await searched({ nameSearch: 'Lovelace', emailSearch: 'ada@' }))).toEqual(['ada@example.com']);
    expect(emailsOf(await searched({ nameSearch: 'Hopper', publicMetadata: { plan: 'pro' } }))).toEqual([]);
    expect(emailsOf(await searched({ nameSearch: null, publicMetadata: { plan: 'free' } }))).toEqual(['grace@example.com']);

    const { id } = await createUser(t, env, { email: 'banned@example.com', firstName: 'Ada', lastName: 'Banned' });
    expect((await t.server(env).post(`/users/${id}/ban`)).statusCode).toBe(200);
    expect(await listed('?nameSearch=ada&status=banned')).toEqual(['banned@example.com']);
    expect(await listed('?nameSearch=ada&status=active')).toEqual(['ada@example.com']);
    expect(await listed('?nameSearch=ada&status=active&status=banned')).toEqual(['ada@example.com', 'banned@example.com']);
    expect(emailsOf(await searched({ nameSearch: 'ada', statuses: ['banned', 'deleted'] }))).toEqual(['banned@example.com']);
  });

  it('pages the matches by the cursor, each exactly once', async () => {
    const paged = await t.given.environment();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await createUser(t, paged, { email: `p${i}@example.com`, firstName: `Page${i}`, lastName: 'Walker' })).id);
    await createUser(t, paged, { email: 'other@example.com', firstName: 'Someone', lastName: 'Else' });
    const first = await searched({ nameSearch: 'walker' }, '?limit=2', paged);
    expect(first.items.map((u) => u.id)).toEqual(ids.slice(0, 2));
    expect(first).toMatchObject({ hasMore: true, nextCursor: ids[1] });
    const second = await t.server(paged).get(`/users?nameSearch=walker&limit=2&cursor=${first.nextCursor}`);
    expect((second.json() as Page).items.map((u) => u.id)).toEqual(ids.slice(2, 4));
    const last = await searched({ nameSearch: 'walker' }, `?limit=2&cursor=${ids[3]}`, paged);
    expect(last.items.map((u) => u.id)).toEqual([ids[4]]);
    expect(last).toMatchObject({ hasMore: false, nextCursor: null });
  });

  it("never lists or finds another environment's users by name", async () => {
    const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
    const own = await createUser(t, mine, { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' });
    await createUser(t, theirs, { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' });
    await createUser(t, theirs, { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' });

    expect((await t.server(mine).get('/users?nameSearch=ada')).json().items.map((u: { id: string }) => u.id)).toEqual([own.id]);
    expect((await searched({ nameSearch: 'Lovelace' }, '', mine)).items.map((u) => u.id)).toEqual([own.id]);
    expect(await listed('?nameSearch=hopper', mine)).toEqual([]);
    expect(emailsOf(await searched({ nameSearch: 'Hopper' }, '', mine))).toEqual([]);
  });

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['longer than 200 characters', 'a'.repeat(201)],
    ['of two lines', 'ada\nlovelace'],
  ])('answers 400 invalid_request for a name search that is %s, in the query and in the search body', async (_case, value) => {
    const inQuery = expectProblem(await t.server(env).get(`/users?nameSearch=${encodeURIComponent(value)}`), 400, 'invalid_request');
    expect(inQuery.properties.errors[0].path).toBe('/querystring/nameSearch');
    const inBody = expectProblem(await t.server(env).post('/users/search', { nameSearch: value }), 400, 'invalid_request');
    expect(inBody.properties.errors[0].path).toBe('/body/nameSearch');
  });

  it('accepts a name search of exactly 200 characters', async () => {
    expect(await listed(`?nameSearch=${'a'.repeat(200)}`)).toEqual([]);
  });

  it("reads the trigram index of migration 0027: the store's expression is the index's", async () => {
    // Without sequential scans, the only plan that does not read every index entry is the trigram index.
    const plan = await t.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const { rows } = await sql<{ 'QUERY PLAN': string }>`explain select id from users where ${nameContains('lovelace')}`.execute(trx);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain('users_name_trgm');
  });
});
