import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClientPlane, createServerClient, GatehouseError } from '@gatehouse/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { freePort } from '../helpers/processes.js';

let t: TestApp;
let baseUrl: string;
beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(() => t?.close());

/** A fetch that records what it sends and passes it on. */
function recordingFetch() {
  const sent: string[] = [];
  return { sent, fetch: (request: Request) => { sent.push(`${request.method} ${request.url}`); return fetch(request); } };
}

const caught = (promise: Promise<unknown>) => promise.then(() => { throw new Error('expected the call to throw'); }, (e: unknown) => e as GatehouseError);

describe('inputs the operation does not take', () => {
  it('throws unknown_input naming the key and the operation, and sends nothing (listUsers({ email }) would list everyone)', async () => {
    const env = await t.given.environment();
    const recorder = recordingFetch();
    const gatehouse = createServerClient({ baseUrl, secretKey: env.secretKey, fetch: recorder.fetch });
    const error = await caught(gatehouse.listUsers({ email: 'ada@example.com' } as never));
    expect(error).toBeInstanceOf(GatehouseError);
    expect(error).toMatchObject({ status: 0, code: 'unknown_input' });
    expect(error.message).toBe('listUsers: unknown input `email` (it takes limit, cursor, emailSearch, nameSearch, status)');
    expect(recorder.sent).toEqual([]);
  });

  it('refuses a body field the operation has none of (banUser({ reason })), leaving the user as it was', async () => {
    const env = await t.given.environment();
    const gatehouse = createServerClient({ baseUrl, secretKey: env.secretKey });
    const user = await gatehouse.createUser({ email: 'kept@example.com' });
    const error = await caught(gatehouse.banUser({ userId: user.id, reason: 'spam' } as never));
    expect(error).toMatchObject({ status: 0, code: 'unknown_input', message: 'banUser: unknown input `reason` (it takes userId)' });
    expect((await gatehouse.getUser({ userId: user.id })).status).toBe('active');
  });

  it('refuses a misspelt body field, and takes any keys inside a metadata object', async () => {
    const env = await t.given.environment();
    const gatehouse = createServerClient({ baseUrl, secretKey: env.secretKey });
    const error = await caught(gatehouse.createUser({ emial: 'typo@example.com' } as never));
    expect(error).toMatchObject({ code: 'unknown_input' });
    expect(error.message).toMatch(/^createUser: unknown input `emial` \(it takes email, password, firstName, .*\)$/);
    const user = await gatehouse.createUser({ email: 'meta@example.com', publicMetadata: { plan: 'pro', anything: { nested: true } } });
    expect(user.publicMetadata).toEqual({ plan: 'pro', anything: { nested: true } });
  });

  it('refuses an unknown key on the client plane too', async () => {
    const app = createClientPlane({ frontendUrl: baseUrl, native: true });
    await expect(app.signIn({ email: 'a@example.com', password: 'x', rememberMe: true } as never))
      .rejects.toMatchObject({ code: 'unknown_input', message: 'signIn: unknown input `rememberMe` (it takes email, password)' });
    await expect(app.getMe({ verbose: true } as never)).rejects.toMatchObject({ code: 'unknown_input', message: 'getMe: unknown input `verbose` (it takes no input)' });
  });
});

describe('calls that get no answer', () => {
  let silent: Server;
  let silentUrl: string;
  beforeAll(async () => {
    // Accepts every request and never answers it.
    silent = createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  });
  afterAll(() => { silent.closeAllConnections(); silent.close(); });

  it('throws network_error with the URL when nothing listens', async () => {
    const closedUrl = `http://127.0.0.1:${await freePort()}`;
    const gatehouse = createServerClient({ baseUrl: closedUrl, secretKey: 'sk_test_x' });
    const error = await caught(gatehouse.getUser({ userId: '01900000-0000-7000-8000-000000000000' }));
    expect(error).toBeInstanceOf(GatehouseError);
    expect(error).toMatchObject({ status: 0, code: 'network_error' });
    expect(error.message).toBe(`getUser: could not reach GET ${closedUrl}/api/server/v1/users/01900000-0000-7000-8000-000000000000 (ECONNREFUSED)`);
    expect(error.cause).toBeInstanceOf(TypeError);
  });

  it("throws timeout after the client's timeoutMs, or a call's own", async () => {
    // The server never answers, so the limit is what ends each call, however busy the machine.
    const limited = createServerClient({ baseUrl: silentUrl, secretKey: 'sk_test_x', timeoutMs: 50 });
    await expect(limited.listUsers()).rejects.toMatchObject({ status: 0, code: 'timeout', message: `listUsers: no answer from GET ${silentUrl}/api/server/v1/users within 50 ms` });
    const unlimited = createServerClient({ baseUrl: silentUrl, secretKey: 'sk_test_x' });
    await expect(unlimited.listUsers({}, { timeoutMs: 20 })).rejects.toMatchObject({ code: 'timeout', message: expect.stringContaining('within 20 ms') });
  });

  it("leaves the caller's own abort an AbortError", async () => {
    const gatehouse = createServerClient({ baseUrl: silentUrl, secretKey: 'sk_test_x', timeoutMs: 60_000 });
    const controller = new AbortController();
    const call = gatehouse.listUsers({}, { signal: controller.signal }).catch((e: unknown) => e);
    controller.abort();
    expect(await call).toMatchObject({ name: 'AbortError' });
  });
});

describe('options a client cannot work without', () => {
  it('refuses a missing or empty secretKey or baseUrl at creation, naming it', () => {
    const create = (options: object) => () => createServerClient(options as never);
    expect(create({ baseUrl })).toThrow(expect.objectContaining({ code: 'missing_option', message: 'createServerClient: the `secretKey` option is missing or empty' }));
    expect(create({ baseUrl, secretKey: process.env.GATEHOUSE_UNSET_SECRET_KEY })).toThrow('createServerClient: the `secretKey` option is missing or empty');
    expect(create({ baseUrl, secretKey: '' })).toThrow('createServerClient: the `secretKey` option is missing or empty');
    expect(create({ secretKey: 'sk_test_x' })).toThrow('createServerClient: the `baseUrl` option is missing or empty');
    expect(create({ baseUrl: 'localhost:3000', secretKey: 'sk_test_x' })).toThrow(expect.objectContaining({ code: 'invalid_option', message: 'createServerClient: the `baseUrl` option is not an http(s) URL: "localhost:3000"' }));
  });

  it('refuses a missing frontendUrl for the client plane', () => {
    expect(() => createClientPlane({ frontendUrl: '' })).toThrow(expect.objectContaining({ code: 'missing_option', message: 'createClientPlane: the `frontendUrl` option is missing or empty' }));
  });
});
