import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { createUser, expectProblem, objectOfSize, storedUser, storedUsers, UUID_V7 } from './support.js';

const STRONG = 'a long and unusual passphrase';
const ARGON2ID_PHC = /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/;

describe('POST /api/server/v1/users', () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp(); });
  afterAll(() => t.close());

  describe('success', () => {
    it('answers 201 with exactly the fields of the User, active, complete and with the email verified', async () => {
      const env = await t.given.environment();
      t.clock.set('2026-11-22T10:00:00.000Z');

      const res = await t.server(env).post('/users', {
        email: 'ada@example.com', password: STRONG, firstName: 'Ada', lastName: 'Lovelace',
        publicMetadata: { plan: 'pro' }, privateMetadata: { stripeId: 'cus_1' }, unsafeMetadata: { theme: 'dark' },
      });

      expect(res.statusCode).toBe(201);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({
        id: expect.stringMatching(UUID_V7),
        environmentId: env.id,
        name: 'Ada Lovelace',
        firstName: 'Ada',
        lastName: 'Lovelace',
        locale: null,
        status: 'active',
        registrationState: 'complete',
        createdAt: '2026-11-22T10:00:00.000Z',
        updatedAt: '2026-11-22T10:00:00.000Z',
        email: 'ada@example.com',
        emailVerifiedAt: '2026-11-22T10:00:00.000Z',
        deletedAt: null,
        publicMetadata: { plan: 'pro' },
        privateMetadata: { stripeId: 'cus_1' },
        unsafeMetadata: { theme: 'dark' },
      });
    });

    it('never puts the password or its hash in the response', async () => {
      const env = await t.given.environment();
      const res = await t.server(env).post('/users', { email: 'grace@example.com', password: STRONG });
      expect(res.statusCode).toBe(201);
      expect(res.body).not.toContain(STRONG);
      expect(res.body).not.toMatch(/argon2|password|hash/i);
    });

    it('stores the password as an argon2id PHC string with a unique salt, and the user can sign in with it at once', async () => {
      const env = await t.given.environment();
      const first = await createUser(t, env, { email: 'one@example.com', password: STRONG });
      const second = await createUser(t, env, { email: 'two@example.com', password: STRONG });

      const [hashOne, hashTwo] = [(await storedUser(t, env, first.id)).password_hash, (await storedUser(t, env, second.id)).password_hash];
      expect(hashOne).toMatch(ARGON2ID_PHC);
      expect(hashTwo).toMatch(ARGON2ID_PHC);
      expect(hashOne).not.toBe(hashTwo);

      const signIn = await t.client(env).post('/auth/sign-in?_is_native=true', { email: 'one@example.com', password: STRONG });
      expect(signIn.statusCode).toBe(200);
      expect(signIn.json().user.id).toBe(first.id);
    });

    it('lower-cases the email in the response and in storage', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'Ada.Lovelace@Example.COM', password: STRONG });
      expect(user.email).toBe('ada.lovelace@example.com');
      expect((await storedUser(t, env, user.id)).email).toBe('ada.lovelace@example.com');
    });

    it('creates a passwordless user who has no password to sign in with', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'nopass@example.com' });
      expect(user).toMatchObject({ email: 'nopass@example.com', status: 'active', registrationState: 'complete' });
      expect((await storedUser(t, env, user.id)).password_hash).toBeNull();

      const signIn = await t.client(env).post('/auth/sign-in?_is_native=true', { email: 'nopass@example.com', password: STRONG });
      expectProblem(signIn, 401, 'invalid_credentials');
    });

    it('starts every metadata bag as {} and the name as null when they are omitted', async () => {
      const env = await t.given.environment();
      const user = await createUser(t, env, { email: 'bare@example.com' });
      expect(user).toMatchObject({
        name: null, firstName: null, lastName: null, locale: null, publicMetadata: {}, privateMetadata: {}, unsafeMetadata: {},
      });
    });

    it('uses a single given name part as the full name', async () => {
      const env = await t.given.environment();
      expect(await createUser(t, env, { email: 'first@example.com', firstName: 'Ada' })).toMatchObject({ name: 'Ada', firstName: 'Ada', lastName: null });
      expect(await createUser(t, env, { email: 'last@example.com', lastName: 'Lovelace' })).toMatchObject({ name: 'Lovelace', lastName: 'Lovelace' });
    });

    it('creates a user with no email, unverified, when the environment requires only a name', async () => {
      const env = await t.given.environment({ requiredFields: ['name'] });
      const user = await createUser(t, env, { firstName: 'Ada', lastName: 'Lovelace' });
      expect(user).toMatchObject({ email: null, emailVerifiedAt: null, name: 'Ada Lovelace', status: 'active', registrationState: 'complete' });
    });
  });

  describe('email uniqueness', () => {
    it('answers 409 email_taken for an email already used in the environment, in any letter case, and stores nothing', async () => {
      const env = await t.given.environment();
      const original = await createUser(t, env, { email: 'ada@example.com' });

      expectProblem(await t.server(env).post('/users', { email: 'ada@example.com' }), 409, 'email_taken');
      expectProblem(await t.server(env).post('/users', { email: 'ADA@Example.com', password: STRONG }), 409, 'email_taken');

      expect((await storedUsers(t, env)).map((u) => u.id)).toEqual([original.id]);
    });

    it('creates exactly one user when five requests with the same email arrive at once', async () => {
      const env = await t.given.environment();
      const responses = await Promise.all(['a@example.com', 'A@example.com', 'a@EXAMPLE.com', 'a@example.com', 'A@EXAMPLE.COM']
        .map((email) => t.server(env).post('/users', { email })));

      expect(responses.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409, 409]);
      for (const res of responses.filter((r) => r.statusCode === 409)) expectProblem(res, 409, 'email_taken');
      expect((await storedUsers(t, env)).map((u) => u.email)).toEqual(['a@example.com']);
    });

    it('lets the same email exist once in each environment', async () => {
      const [a, b] = [await t.given.environment(), await t.given.environment()];
      const inA = await createUser(t, a, { email: 'ada@example.com' });
      const inB = await createUser(t, b, { email: 'ada@example.com' });
      expect(inA.id).not.toBe(inB.id);
      expect(inB.environmentId).toBe(b.id);
    });

    it("reuses a deleted user's email for a new user, keeping the deleted one as it was", async () => {
      const env = await t.given.environment();
      const old = await createUser(t, env, { email: 'ada@example.com' });
      expect((await t.server(env).delete(`/users/${old.id}`)).statusCode).toBe(204);

      const fresh = await createUser(t, env, { email: 'Ada@example.com', password: STRONG });

      expect(fresh.id).not.toBe(old.id);
      expect(fresh).toMatchObject({ email: 'ada@example.com', status: 'active' });
      expect((await storedUsers(t, env)).map((u) => [u.id, u.status])).toEqual([[old.id, 'deleted'], [fresh.id, 'active']]);
    });
  });

  describe('required fields of the environment', () => {
    it('answers 400 email_required when the default settings require an email and none is given, storing nothing', async () => {
      const env = await t.given.environment();
      const res = await t.server(env).post('/users', { firstName: 'Ada', lastName: 'Lovelace', password: STRONG });
      expectProblem(res, 400, 'email_required');
      expect(await storedUsers(t, env)).toEqual([]);
    });

    it.each([
      ['only a first name', { firstName: 'Ada' }],
      ['only a last name', { lastName: 'Lovelace' }],
      ['no name at all', {}],
    ])('answers 400 name_required for %s when the environment requires a name, storing nothing', async (_case, names) => {
      const env = await t.given.environment({ requiredFields: ['name'] });
      const res = await t.server(env).post('/users', { email: 'ada@example.com', ...names });
      expectProblem(res, 400, 'name_required');
      expect(await storedUsers(t, env)).toEqual([]);
    });

    it('requires both an email and a name when the environment asks for both', async () => {
      const env = await t.given.environment({ requiredFields: ['email', 'name'] });
      expectProblem(await t.server(env).post('/users', { firstName: 'Ada', lastName: 'Lovelace' }), 400, 'email_required');
      expectProblem(await t.server(env).post('/users', { email: 'ada@example.com', firstName: 'Ada' }), 400, 'name_required');
      expect(await storedUsers(t, env)).toEqual([]);
      expect(await createUser(t, env, { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' })).toMatchObject({ name: 'Ada Lovelace' });
    });

    it('requires nothing when the environment requires no fields', async () => {
      const env = await t.given.environment({ requiredFields: [] });
      expect(await createUser(t, env, {})).toMatchObject({ email: null, name: null, status: 'active' });
    });
  });

  describe('password policy', () => {
    it.each([
      ['too short', 'k7#qv9z'],
      ['a common password', 'password123'],
      ['another common password', 'iloveyou1'],
      ['a common password in other letter case', 'ILoveYou1'],
      ["the user's own email", 'ada.lovelace@example.com'],
      ["the user's own email in other letter case", 'Ada.Lovelace@Example.com'],
      ['the product name', 'gatehouse-rocks-2026'],
      ['longer than 256 characters', 'k'.repeat(257)],
    ])('answers 400 weak_password for a password that is %s, storing nothing', async (_case, password) => {
      const env = await t.given.environment();
      const res = await t.server(env).post('/users', { email: 'Ada.Lovelace@example.com', password });
      expectProblem(res, 400, 'weak_password');
      expect(await storedUsers(t, env)).toEqual([]);
    });

    it('accepts a password of exactly 8 and of exactly 256 characters', async () => {
      const env = await t.given.environment();
      await createUser(t, env, { email: 'short@example.com', password: 'k7#qv9zm' });
      await createUser(t, env, { email: 'long@example.com', password: 'k'.repeat(255) + 'q' });
      expect(await storedUsers(t, env)).toHaveLength(2);
    });

    it("applies the environment's own minimum length", async () => {
      const env = await t.given.environment({ passwordPolicy: { minLength: 15 } });
      expectProblem(await t.server(env).post('/users', { email: 'a@example.com', password: 'k7#qv9zm-abcde' }), 400, 'weak_password');
      await createUser(t, env, { email: 'a@example.com', password: 'k7#qv9zm-abcdef' });
    });

    it('answers 400 invalid_request for an empty password', async () => {
      const env = await t.given.environment();
      expectProblem(await t.server(env).post('/users', { email: 'a@example.com', password: '' }), 400, 'invalid_request');
      expect(await storedUsers(t, env)).toEqual([]);
    });
  });

  describe('metadata budget', () => {
    it('accepts metadata whose three bags take exactly 8192 bytes together', async () => {
      const env = await t.given.environment();
      // 8188 + the 2 bytes of each empty bag = 8192.
      const user = await createUser(t, env, { email: 'a@example.com', publicMetadata: objectOfSize(8188) });
      expect((await storedUser(t, env, user.id)).public_metadata).toEqual(objectOfSize(8188));
    });

    it('answers 400 metadata_too_large at 8193 bytes, storing nothing', async () => {
      const env = await t.given.environment();
      const res = await t.server(env).post('/users', { email: 'a@example.com', publicMetadata: objectOfSize(8189) });
      const body = expectProblem(res, 400, 'metadata_too_large');
      expect(body.properties).toEqual({ code: 'metadata_too_large', bytes: 8193, limit: 8192 });
      expect(await storedUsers(t, env)).toEqual([]);
    });

    it('counts the three bags together, with no limit per bag', async () => {
      const env = await t.given.environment();
      const third = objectOfSize(2731); // 3 × 2731 = 8193
      const res = await t.server(env).post('/users', {
        email: 'a@example.com', publicMetadata: third, privateMetadata: third, unsafeMetadata: third,
      });
      expect(expectProblem(res, 400, 'metadata_too_large').properties.bytes).toBe(8193);
      await createUser(t, env, {
        email: 'a@example.com', publicMetadata: objectOfSize(2730), privateMetadata: objectOfSize(2731), unsafeMetadata: objectOfSize(2731),
      });
    });

    it('counts UTF-8 bytes, not characters', async () => {
      const env = await t.given.environment();
      // 4100 × "é" is 4100 characters but 8200 bytes.
      const res = await t.server(env).post('/users', { email: 'a@example.com', privateMetadata: { k: 'é'.repeat(4100) } });
      expectProblem(res, 400, 'metadata_too_large');
      expect(await storedUsers(t, env)).toEqual([]);
    });
  });

  describe('body validation', () => {
    it('answers 400 invalid_request naming an unknown body field, storing nothing', async () => {
      const env = await t.given.environment();
      const res = await t.server(env).post('/users', { email: 'a@example.com', status: 'banned' });
      const body = expectProblem(res, 400, 'invalid_request');
      expect(body.properties.errors).toEqual([{ path: '/body/status', message: expect.any(String) }]);
      expect(await storedUsers(t, env)).toEqual([]);
    });

    it.each([
      ['a malformed email', { email: 'not-an-email' }, '/body/email'],
      ['a metadata bag that is an array', { email: 'a@example.com', publicMetadata: ['a'] }, '/body/publicMetadata'],
      ['a metadata bag that is a string', { email: 'a@example.com', unsafeMetadata: 'x' }, '/body/unsafeMetadata'],
      ['an empty first name', { email: 'a@example.com', firstName: '' }, '/body/firstName'],
      ['a password that is an object', { email: 'a@example.com', password: { value: 'k7#qv9zm-abc' } }, '/body/password'],
    ])('answers 400 invalid_request for %s, storing nothing', async (_case, payload, path) => {
      const env = await t.given.environment();
      const body = expectProblem(await t.server(env).post('/users', payload), 400, 'invalid_request');
      expect(body.properties.errors).toContainEqual({ path, message: expect.any(String) });
      expect(await storedUsers(t, env)).toEqual([]);
    });

    it('answers 400 invalid_request for a body that is not JSON', async () => {
      const env = await t.given.environment();
      const res = await t.server(env).post('/users', '{"email":', { headers: { 'content-type': 'application/json' } });
      expectProblem(res, 400, 'invalid_request');
      expect(await storedUsers(t, env)).toEqual([]);
    });
  });
});
