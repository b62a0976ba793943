import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, TEST_PORT, type TestApp, type TestEnv } from '../helpers/app.js';
import { expectProblem } from '../helpers/problem.js';

let t: TestApp;
beforeAll(async () => { t = await startTestApp(); });
afterAll(() => t.close());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const MISSING_ID = '01900000-0000-7000-8000-000000000000';
const unique = () => randomUUID().slice(0, 8);

/** Every default of contract.md section 2, resolved. */
const DEFAULT_SETTINGS = {
  signUpUrl: null,
  invitationAcceptUrl: null,
  impersonationLandingUrl: null,
  impersonationEnabled: true,
  impersonationSessionLifetimeSeconds: 3600,
  plan: { impersonation: true, impersonationQuotaPerMonth: 100 },
  requiredFields: ['email'],
  passwordPolicy: { minLength: 8, maxLength: 256 },
  invitationRateLimitPerHour: 100,
  auditLogEnabled: true,
  auditRetentionDays: null,
  emailVerificationRequired: true,
  dataErasureGraceDays: 7,
  enumerationProtection: false,
  oauthLinkVerifiedEmails: true,
  selfDeletionEnabled: true,
  mfa: { policy: 'optional' },
  passkeys: { enabled: true, rpId: null },
  session: { idleTimeoutSeconds: 604800, maxLifetimeSeconds: 2592000, jwtLifetimeSeconds: 60, jwtAudience: null },
  lockout: { maxFailedAttempts: 10, coolDownSeconds: 3600, ipMaxFailures: 100, ipWindowSeconds: 900 },
  hostedPages: { enabled: true, afterSignInUrl: null, afterSignOutUrl: null, termsUrl: null, branding: { productName: null, logoUrl: null, primaryColor: null } },
};

const storedEnvironment = (id: string) => t.db.selectFrom('environments').selectAll().where('id', '=', id).executeTakeFirst();
const environmentsNamed = (name: string) => t.db.selectFrom('environments').select('id').where('name', '=', name).execute();
const asTestEnv = (body: { id: string; secretKey: string; frontendHost: string; name: string }): TestEnv =>
  ({ id: body.id, secretKey: body.secretKey, frontendHost: body.frontendHost, name: body.name });
/** Whether the client plane serves a host (an unknown host is 404; a known one without a session is 401). */
const hostIsServed = async (host: string) => (await t.app.inject({ method: 'GET', url: '/_svc/me', headers: { host } })).statusCode === 401;


describe('POST /api/admin/v1/environments', () => {
  it('creates an environment with every default setting resolved and shows its secret key once', async () => {
    const name = `Create ${unique()}`;
    const res = await t.admin.post('/environments', { name });

    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(['createdAt', 'frontendHost', 'id', 'name', 'secretKey', 'secretKeyId', 'settings']);
    expect(body.id).toMatch(UUID);
    expect(body.name).toBe(name);
    expect(body.settings).toEqual(DEFAULT_SETTINGS);
    expect(body.createdAt).toBe(t.clock.now().toISOString());
    expect(body.secretKey).toMatch(/^sk_[A-Za-z0-9_-]{43,}$/);
    expect(body.secretKeyId).toMatch(UUID);
    expect((await t.server(asTestEnv(body)).get('/allowed-origins')).statusCode).toBe(200);
  });

  it('stores only the settings that were given and resolves the rest from the defaults', async () => {
    const res = await t.admin.post('/environments', { name: `Partial ${unique()}`, settings: { lockout: { maxFailedAttempts: 5 }, signUpUrl: 'https://app.example.com/sign-up' } });
    expect(res.statusCode).toBe(201);
    expect(res.json().settings).toEqual({
      ...DEFAULT_SETTINGS, signUpUrl: 'https://app.example.com/sign-up', lockout: { ...DEFAULT_SETTINGS.lockout, maxFailedAttempts: 5 },
    });
    expect((await storedEnvironment(res.json().id))!.settings).toEqual({ lockout: { maxFailedAttempts: 5 }, signUpUrl: 'https://app.example.com/sign-up' });
  });

  it('defaults frontendHost to <slug-of-name>.localhost:<port>', async () => {
    const id = unique();
    const res = await t.admin.post('/environments', { name: `My Shop! ${id}` });
    expect(res.statusCode).toBe(201);
    expect(res.json().frontendHost).toBe(`my-shop-${id}.localhost:${TEST_PORT}`);
    expect(await hostIsServed(res.json().frontendHost)).toBe(true);
  });

  it('folds accents and punctuation into the slug', async () => {
    const id = unique();
    const res = await t.admin.post('/environments', { name: `  Café Zürich -- ${id}  ` });
    expect(res.json().frontendHost).toBe(`cafe-zurich-${id}.localhost:${TEST_PORT}`);
  });

  it('cuts a long slug to 40 characters without leaving a hyphen at the end', async () => {
    const id = unique();
    const res = await t.admin.post('/environments', { name: `${id}${'a'.repeat(31)} and more words` });
    expect(res.json().frontendHost).toBe(`${id}${'a'.repeat(31)}.localhost:${TEST_PORT}`);
  });

  it('gives a second environment with the same name a different default host', async () => {
    const name = `Twin ${unique()}`;
    const first = await t.admin.post('/environments', { name });
    const second = await t.admin.post('/environments', { name });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    const slug = name.toLowerCase().replace(' ', '-');
    expect(first.json().frontendHost).toBe(`${slug}.localhost:${TEST_PORT}`);
    expect(second.json().frontendHost).toMatch(new RegExp(`^${slug}-[a-z0-9]{6}\\.localhost:${TEST_PORT}$`));
    expect(second.json().id).not.toBe(first.json().id);
  });

  it('uses an explicit frontendHost, lower-cased, and the client plane serves it', async () => {
    const host = `App-${unique()}.Example.com`;
    const res = await t.admin.post('/environments', { name: 'explicit', frontendHost: host });
    expect(res.statusCode).toBe(201);
    expect(res.json().frontendHost).toBe(host.toLowerCase());
    expect(await hostIsServed(host.toLowerCase())).toBe(true);
  });

  it('refuses a frontendHost another environment already has, in any letter case, with 409 and stores nothing', async () => {
    const host = `taken-${unique()}.example.com`;
    expect((await t.admin.post('/environments', { name: 'first', frontendHost: host })).statusCode).toBe(201);
    const name = `Second ${unique()}`;
    const res = await t.admin.post('/environments', { name, frontendHost: host.toUpperCase() });
    expectProblem(res, 409, 'frontend_host_taken');
    expect(await environmentsNamed(name)).toEqual([]);
  });

  it('refuses a frontendHost that is not host[:port] with 400', async () => {
    for (const frontendHost of ['https://app.example.com', 'app.example.com/path', 'app example.com', '']) {
      const name = `Bad host ${unique()}`;
      const res = await t.admin.post('/environments', { name, frontendHost });
      expectProblem(res, 400, 'invalid_request');
      expect(res.json().properties.errors.length).toBeGreaterThan(0);
      expect(res.json().properties.errors.every((e: { path: string }) => e.path === '/body/frontendHost')).toBe(true);
      expect(await environmentsNamed(name)).toEqual([]);
    }
  });

  it('refuses a missing or empty name and unknown fields with 400 naming them', async () => {
    const missing = await t.admin.post('/environments', {});
    expectProblem(missing, 400, 'invalid_request');
    expect(missing.json().properties.errors).toEqual([{ path: '/body/name', message: "must have required property 'name'" }]);
    const empty = await t.admin.post('/environments', { name: '' });
    expect(empty.json().properties.errors).toEqual([{ path: '/body/name', message: expect.any(String) }]);
    const unknown = await t.admin.post('/environments', { name: 'x', region: 'eu' });
    expect(unknown.json().properties.errors).toEqual([{ path: '/body/region', message: 'must NOT have additional properties' }]);
  });

  it.each([
    ['an unknown key', { nope: 1 }, [{ path: '/body/settings/nope', message: 'is not a known setting' }]],
    ['an unknown nested key', { lockout: { maxFailedAttempts: 5, extra: 1 } }, [{ path: '/body/settings/lockout/extra', message: 'is not a known setting' }]],
    ['passwordPolicy.minLength 4', { passwordPolicy: { minLength: 4 } }, [{ path: '/body/settings/passwordPolicy/minLength', message: 'must be >= 8' }]],
    ['minLength above maxLength', { passwordPolicy: { minLength: 20, maxLength: 10 } }, [{ path: '/body/settings/passwordPolicy', message: 'minLength must not exceed maxLength' }]],
    ['a string for an integer', { lockout: { maxFailedAttempts: 'ten' } }, [{ path: '/body/settings/lockout/maxFailedAttempts', message: 'must be integer' }]],
    ['a string for a boolean', { impersonationEnabled: 'yes' }, [{ path: '/body/settings/impersonationEnabled', message: 'must be boolean' }]],
    ['a number for an object', { plan: 5 }, [{ path: '/body/settings/plan', message: 'must be object' }]],
    ['an unknown required field', { requiredFields: ['phone'] }, [{ path: '/body/settings/requiredFields/0', message: 'must be one of "email", "name"' }]],
    ['a zero lifetime', { session: { idleTimeoutSeconds: 0 } }, [{ path: '/body/settings/session/idleTimeoutSeconds', message: 'must be >= 1' }]],
    ['an idle timeout past ten years', { session: { idleTimeoutSeconds: 3_000_000_000 } }, [{ path: '/body/settings/session/idleTimeoutSeconds', message: 'must be <= 315360000' }]],
    ['a cool-down past ten years', { lockout: { coolDownSeconds: 1e15 } }, [{ path: '/body/settings/lockout/coolDownSeconds', message: 'must be <= 315360000' }]],
    ['a failure count past a million', { lockout: { ipMaxFailures: 1e12 } }, [{ path: '/body/settings/lockout/ipMaxFailures', message: 'must be <= 1000000' }]],
    ['a javascript: URL', { impersonationLandingUrl: 'javascript:alert(1)' }, [{ path: '/body/settings/impersonationLandingUrl', message: expect.stringMatching(/absolute URL/) }]],
    ['a relative URL', { signUpUrl: '/sign-up' }, [{ path: '/body/settings/signUpUrl', message: expect.any(String) }]],
  ])('refuses settings with %s with 400 naming the path, and creates nothing', async (_what, settings, errors) => {
    const name = `Invalid ${unique()}`;
    const res = await t.admin.post('/environments', { name, settings });
    expectProblem(res, 400, 'invalid_request');
    expect(res.json().properties.errors).toEqual(errors);
    expect(await environmentsNamed(name)).toEqual([]);
  });
});

describe('frontend hosts and concurrent changes', () => {
  it('stores a frontend host without its default port, since browsers send Host and Origin without it', async () => {
    const res = await t.admin.post('/environments', { name: `Ports ${unique()}`, frontendHost: `p-${unique()}.example.com:443` });
    expect(res.statusCode).toBe(201);
    expect(res.json().frontendHost).toMatch(/^p-[^:]+\.example\.com$/);
    const env = res.json();
    const viaHost = await t.app.inject({ method: 'POST', url: '/_svc/auth/sign-in', headers: { host: env.frontendHost, origin: `https://${env.frontendHost}` },
      payload: { email: 'nobody@example.com', password: 'not the password' } });
    expect(viaHost.statusCode).toBe(401);
    const patched = await t.admin.patch(`/environments/${env.id}`, { frontendHost: `q-${unique()}.example.com:80` });
    expect(patched.json().frontendHost).toMatch(/^q-[^:]+\.example\.com$/);
  });

  it('keeps both of two concurrent settings changes (each merges into the row as it is, under a lock)', async () => {
    const created = (await t.admin.post('/environments', { name: `Concurrent ${unique()}` })).json();
    const results = await Promise.all([
      t.admin.patch(`/environments/${created.id}`, { settings: { signUpUrl: 'https://app.example.com/sign-up' } }),
      t.admin.patch(`/environments/${created.id}`, { settings: { lockout: { maxFailedAttempts: 5 } } }),
      t.admin.patch(`/environments/${created.id}`, { settings: { emailVerificationRequired: false } }),
    ]);
    expect(results.map((r) => r.statusCode)).toEqual([200, 200, 200]);
    const { settings } = (await t.admin.get(`/environments/${created.id}`)).json();
    expect(settings).toMatchObject({ signUpUrl: 'https://app.example.com/sign-up', lockout: { maxFailedAttempts: 5 }, emailVerificationRequired: false });
  });
});

describe('GET /api/admin/v1/environments and /environments/:id', () => {
  it('returns the environment without any secret key', async () => {
    const created = (await t.admin.post('/environments', { name: `Get ${unique()}` })).json();
    const res = await t.admin.get(`/environments/${created.id}`);
    expect(res.statusCode).toBe(200);
    const { secretKey, secretKeyId, ...rest } = created;
    expect(res.json()).toEqual(rest);
    expect(res.body).not.toContain(secretKey);
    expect(res.body).not.toContain(secretKeyId);
  });

  it('lists environments without secret keys', async () => {
    const created = (await t.admin.post('/environments', { name: `Listed ${unique()}` })).json();
    const res = await t.admin.get('/environments');
    expect(res.statusCode).toBe(200);
    const { secretKey, secretKeyId, ...rest } = created;
    expect(res.json().items).toContainEqual(rest);
    expect(res.body).not.toMatch(/sk_/);
    expect(res.json().items.every((e: object) => !('secretKey' in e))).toBe(true);
  });

  it('answers 404 resource_not_found for an unknown id and 400 for an id that is not a uuid', async () => {
    expectProblem(await t.admin.get(`/environments/${MISSING_ID}`), 404, 'resource_not_found');
    const bad = await t.admin.get('/environments/not-a-uuid');
    expectProblem(bad, 400, 'invalid_request');
    expect(bad.json().properties.errors).toEqual([{ path: '/params/id', message: 'must match format "uuid"' }]);
  });
});

describe('PATCH /api/admin/v1/environments/:id', () => {
  it('renames an environment and keeps everything else', async () => {
    const env = await t.given.environment();
    const before = (await t.admin.get(`/environments/${env.id}`)).json();
    const res = await t.admin.patch(`/environments/${env.id}`, { name: 'Renamed' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ...before, name: 'Renamed' });
    expect((await storedEnvironment(env.id))!.name).toBe('Renamed');
  });

  it('moves the environment to a new frontendHost: the old host stops resolving and the new one serves it', async () => {
    const env = await t.given.environment();
    const host = `moved-${unique()}.example.com`;
    const res = await t.admin.patch(`/environments/${env.id}`, { frontendHost: host });
    expect(res.statusCode).toBe(200);
    expect(res.json().frontendHost).toBe(host);
    expect(await hostIsServed(host)).toBe(true);
    expect(await hostIsServed(env.frontendHost)).toBe(false);
  });

  it("refuses another environment's frontendHost with 409 and keeps the old host", async () => {
    const [mine, theirs] = [await t.given.environment(), await t.given.environment()];
    const res = await t.admin.patch(`/environments/${mine.id}`, { frontendHost: theirs.frontendHost.toUpperCase() });
    expectProblem(res, 409, 'frontend_host_taken');
    expect((await storedEnvironment(mine.id))!.frontend_host).toBe(mine.frontendHost);
  });

  it('deep-merges settings: setting lockout.maxFailedAttempts alone leaves every other setting as it was', async () => {
    const env = await t.given.environment({ signUpUrl: 'https://app.example.com/sign-up', lockout: { coolDownSeconds: 60 } });
    const res = await t.admin.patch(`/environments/${env.id}`, { settings: { lockout: { maxFailedAttempts: 3 } } });
    expect(res.statusCode).toBe(200);
    expect(res.json().settings).toEqual({
      ...DEFAULT_SETTINGS,
      signUpUrl: 'https://app.example.com/sign-up',
      lockout: { ...DEFAULT_SETTINGS.lockout, maxFailedAttempts: 3, coolDownSeconds: 60 },
    });
    expect((await t.admin.get(`/environments/${env.id}`)).json().settings).toEqual(res.json().settings);
  });

  it('restores a default when a setting is set to null', async () => {
    const env = await t.given.environment({ signUpUrl: 'https://app.example.com/sign-up', lockout: { maxFailedAttempts: 3 } });
    const res = await t.admin.patch(`/environments/${env.id}`, { settings: { signUpUrl: null, lockout: null } });
    expect(res.statusCode).toBe(200);
    expect(res.json().settings).toEqual(DEFAULT_SETTINGS);
    expect((await storedEnvironment(env.id))!.settings).toEqual({});
  });

  it('changes name, frontendHost and settings together', async () => {
    const env = await t.given.environment();
    const host = `all-${unique()}.example.com`;
    const res = await t.admin.patch(`/environments/${env.id}`, { name: 'All three', frontendHost: host, settings: { emailVerificationRequired: false } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: env.id, name: 'All three', frontendHost: host, settings: { ...DEFAULT_SETTINGS, emailVerificationRequired: false } });
  });

  it.each([
    ['an unknown key', { nope: true }, '/body/settings/nope'],
    ['passwordPolicy.minLength 4', { passwordPolicy: { minLength: 4 } }, '/body/settings/passwordPolicy/minLength'],
    ['a wrong type', { lockout: { maxFailedAttempts: 'x' } }, '/body/settings/lockout/maxFailedAttempts'],
    ['a maxLength below the stored minLength', { passwordPolicy: { maxLength: 10 } }, '/body/settings/passwordPolicy'],
  ])('refuses invalid settings (%s) with 400 and stores nothing, not even the valid parts', async (_what, invalid, path) => {
    const env = await t.given.environment({ passwordPolicy: { minLength: 12 } });
    const before = await storedEnvironment(env.id);
    const res = await t.admin.patch(`/environments/${env.id}`, { name: 'Should not stick', settings: { ...invalid, auditLogEnabled: false } });
    expectProblem(res, 400, 'invalid_request');
    expect(res.json().properties.errors).toEqual([{ path, message: expect.any(String) }]);
    expect(await storedEnvironment(env.id)).toEqual(before);
  });

  it('refuses unknown fields with 400 and stores nothing', async () => {
    const env = await t.given.environment();
    const before = await storedEnvironment(env.id);
    const res = await t.admin.patch(`/environments/${env.id}`, { name: 'x', allowedOrigins: ['https://a.com'] });
    expectProblem(res, 400, 'invalid_request');
    expect(res.json().properties.errors).toEqual([{ path: '/body/allowedOrigins', message: 'must NOT have additional properties' }]);
    expect(await storedEnvironment(env.id)).toEqual(before);
  });

  it('answers 404 resource_not_found for an unknown environment', async () => {
    expectProblem(await t.admin.patch(`/environments/${MISSING_ID}`, { name: 'x' }), 404, 'resource_not_found');
    expect(await storedEnvironment(MISSING_ID)).toBeUndefined();
  });
});

describe('admin plane authentication', () => {
  it.each([
    ['no Authorization header', undefined],
    ['a wrong token', 'Bearer wrong-token'],
    ['the admin token with one character changed', `Bearer ${ADMIN_TOKEN.slice(0, -1)}x`],
    ['the admin token in Basic form', `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`],
  ])('answers 401 unauthenticated with WWW-Authenticate for %s, and creates nothing', async (_what, authorization) => {
    const name = `Unauthorised ${unique()}`;
    const headers = authorization ? { authorization } : {};
    const list = await t.app.inject({ method: 'GET', url: '/api/admin/v1/environments', headers });
    const create = await t.app.inject({ method: 'POST', url: '/api/admin/v1/environments', headers, payload: { name } });
    for (const res of [list, create]) {
      expectProblem(res, 401, 'unauthenticated');
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
    expect(await environmentsNamed(name)).toEqual([]);
  });

  it("refuses an environment's secret key on the admin plane and the admin token on the Server API", async () => {
    const env = await t.given.environment();
    expectProblem(await t.app.inject({ method: 'GET', url: `/api/admin/v1/environments/${env.id}`, headers: { authorization: `Bearer ${env.secretKey}` } }), 401, 'unauthenticated');
    expectProblem(await t.server(env, ADMIN_TOKEN).get('/allowed-origins'), 401, 'unauthenticated');
  });

  it("accepts on each plane only that plane's credential: a client session token works nowhere else", async () => {
    const env = await t.given.environment();
    const session = await t.given.session(env, await t.given.user(env));
    expect((await t.client(env, { token: session.token }).get('/me')).statusCode).toBe(200);
    expectProblem(await t.server(env, session.token).get('/allowed-origins'), 401, 'unauthenticated');
    expectProblem(await t.app.inject({ method: 'GET', url: '/api/admin/v1/environments', headers: { authorization: `Bearer ${session.token}` } }), 401, 'unauthenticated');
    expectProblem(await t.client(env, { token: env.secretKey }).get('/me'), 401, 'unauthenticated');
    expectProblem(await t.client(env, { token: ADMIN_TOKEN }).get('/me'), 401, 'unauthenticated');
  });

  it('does not exist at all when the app has no admin token: 404 even with a bearer token', async () => {
    const bare = await startTestApp({ adminToken: undefined });
    try {
      for (const [method, payload] of [['GET', undefined], ['POST', { name: 'x' }]] as const) {
        const res = await bare.app.inject({ method, url: '/api/admin/v1/environments', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload });
        expectProblem(res, 404, 'resource_not_found');
      }
      expect(await bare.db.selectFrom('environments').select('id').where('name', '=', 'x').execute()).toEqual([]);
    } finally {
      await bare.close();
    }
  });
});

describe('GET /api/admin/v1/environments/:id/outbox', () => {
  const password = 'a long enough password 1';

  it('lists the mail sent to an address newest first, matching the address in any case', async () => {
    const env = await t.given.environment();
    const email = `outbox-${unique()}@example.com`;
    expect((await t.client(env).post('/auth/sign-up', { email, password })).statusCode).toBe(201);
    t.clock.advance(1000);
    expect((await t.client(env).post('/auth/verify-email/send', { email })).statusCode).toBe(202);
    expect((await t.client(env).post('/auth/sign-up', { email: `someone-else-${unique()}@example.com`, password })).statusCode).toBe(201);

    const res = await t.admin.get(`/environments/${env.id}/outbox?to=${encodeURIComponent(email.toUpperCase())}`);
    expect(res.statusCode).toBe(200);
    const items = res.json().items;
    expect(items).toHaveLength(2);
    for (const item of items) {
      expect(Object.keys(item).sort()).toEqual(['createdAt', 'html', 'id', 'subject', 'text', 'to']);
      expect(item.to).toBe(email);
      expect(item.subject).toMatch(/\d{6}/);
    }
    expect(items[0].id > items[1].id).toBe(true);
    expect(new Date(items[0].createdAt).getTime() - new Date(items[1].createdAt).getTime()).toBe(1000);
    const codes = items.map((i: { text: string }) => /\b(\d{6})\b/.exec(i.text)![1]);
    expect(codes[0]).not.toBe(codes[1]);
  });

  it("lists every address's mail without the to filter, and never another environment's", async () => {
    const [env, other] = [await t.given.environment(), await t.given.environment()];
    const a = `a-${unique()}@example.com`;
    const b = `b-${unique()}@example.com`;
    await t.client(env).post('/auth/sign-up', { email: a, password });
    await t.client(env).post('/auth/sign-up', { email: b, password });
    await t.client(other).post('/auth/sign-up', { email: `c-${unique()}@example.com`, password });

    const res = await t.admin.get(`/environments/${env.id}/outbox`);
    expect(res.statusCode).toBe(200);
    expect(res.json().items.map((i: { to: string }) => i.to)).toEqual([b, a]);
    expect((await t.admin.get(`/environments/${other.id}/outbox?to=${encodeURIComponent(a)}`)).json()).toEqual({ items: [], mode: 'catching' });
  });

  it('answers 404 for an unknown environment and 400 for a to that is not an email', async () => {
    const env = await t.given.environment();
    expectProblem(await t.admin.get(`/environments/${MISSING_ID}/outbox`), 404, 'resource_not_found');
    const bad = await t.admin.get(`/environments/${env.id}/outbox?to=not-an-email`);
    expectProblem(bad, 400, 'invalid_request');
    expect(bad.json().properties.errors).toEqual([{ path: '/querystring/to', message: expect.any(String) }]);
  });
});
