import http from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/given.js';
import { httpRequest, spawnServer, type HttpResponse, type ServerProcess } from '../helpers/processes.js';


const dataDirs: string[] = [];
async function freshDataDir() {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-shutdown-'));
  dataDirs.push(dir);
  return dir;
}

/** What the first start prints on stderr about the `development` environment, if anything. */
function printedEnvironment(stderr: string) {
  return {
    secretKey: /secret key:\s+(sk_[A-Za-z0-9_-]+)/.exec(stderr)?.[1],
    frontendHost: /frontend host:\s+(\S+)/.exec(stderr)?.[1],
  };
}

const listUsers = (server: ServerProcess, secretKey: string) =>
  httpRequest(server.port, { path: '/api/server/v1/users', headers: { authorization: `Bearer ${secretKey}` } });

describe('the server process (src/main.ts)', () => {
  let servers: ServerProcess[] = [];
  afterEach(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    servers = [];
  });
  afterAll(async () => {
    await Promise.all(dataDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  it('prints the secret key and frontend host of "development" on the first start only, and the key works after a restart', async () => {
    const dataDir = await freshDataDir();
    const first = await spawnServer({ env: { GATEHOUSE_DATA_DIR: dataDir } });
    servers.push(first);

    const printed = printedEnvironment(first.stderr());
    expect(first.stderr()).toContain('Created the first environment, "development"');
    expect(printed.secretKey).toMatch(/^sk_[A-Za-z0-9_-]{43,}$/);
    expect(printed.frontendHost).toBe(`localhost:${first.port}`);
    expect((await listUsers(first, printed.secretKey!)).status).toBe(200);
    expect(await first.stop()).toEqual({ code: 0, signal: null });

    const second = await spawnServer({ env: { GATEHOUSE_DATA_DIR: dataDir } });
    servers.push(second);

    expect(second.stderr()).not.toContain('sk_');
    expect(second.stderr()).not.toContain('Created the first environment');
    expect(second.stderr()).toContain(`Gatehouse listening on http://127.0.0.1:${second.port}`);
    expect((await listUsers(second, printed.secretKey!)).status).toBe(200);
  });

  it('on SIGTERM refuses new requests, finishes the requests in flight, and exits with code 0 despite keep-alive clients', async () => {
    const server = await spawnServer({ env: { GATEHOUSE_DATA_DIR: await freshDataDir(), LOG_LEVEL: 'info' } });
    servers.push(server);
    const { secretKey, frontendHost } = printedEnvironment(server.stderr());
    const email = 'ada@example.com';
    const created = await httpRequest(server.port, {
      method: 'POST', path: '/api/server/v1/users', headers: { authorization: `Bearer ${secretKey}` }, body: { email, password: PASSWORD },
    });
    expect(created.status).toBe(201);
    const keepAlive = new http.Agent({ keepAlive: true });
    const signInPath = '/_svc/auth/sign-in?_is_native=true';

    // One sign-in whose body is only half sent: it is in flight for certain when the signal arrives.
    const halfSent = startHalfSentRequest(server.port, signInPath, frontendHost!, JSON.stringify({ email, password: PASSWORD }), keepAlive);
    // Several complete ones, sent concurrently on keep-alive connections.
    const concurrent = Array.from({ length: 4 }, () =>
      httpRequest(server.port, { method: 'POST', path: signInPath, host: frontendHost, body: { email, password: PASSWORD }, agent: keepAlive }));
    // Each request logs "incoming request" with its url as soon as it reaches a route.
    await server.waitForOutput((stdout) => stdout.split(`"url":"${signInPath}"`).length - 1 >= 5);

    server.signal('SIGTERM');
    await server.waitForOutput('draining in-flight requests');
    // The listener closes right after the log line; a request that slips in between is answered 503, or
    // reset when the kernel had queued its connection on the listener that just closed.
    const refused = await httpRequest(server.port, { path: '/healthz' }).then((r) => r.status, (err: NodeJS.ErrnoException) => err.code);
    halfSent.finish();

    const responses = [await halfSent.response, ...(await Promise.all(concurrent))];
    expect(['ECONNREFUSED', 'ECONNRESET', 503]).toContain(refused);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(responses.every((r) => typeof r.json().sessionToken === 'string')).toBe(true);
    // The keep-alive agent still holds its connections open: without closing them, Fastify's drain would
    // wait for keepAliveTimeout (72 s). Half that tells the two apart on however busy a machine.
    let timer: NodeJS.Timeout | undefined;
    const exit = await Promise.race([server.exited, new Promise((resolve) => { timer = setTimeout(resolve, 36_000, 'still running after 36 s'); })]);
    clearTimeout(timer);
    expect(exit).toEqual({ code: 0, signal: null });
    keepAlive.destroy();
  });
});

/** Sends the headers and half the body of a POST; finish() sends the rest. */
function startHalfSentRequest(port: number, path: string, host: string, body: string, agent: http.Agent) {
  let finish!: () => void;
  const response = new Promise<HttpResponse>((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port, method: 'POST', path, agent,
      headers: { host, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => { text += chunk; }).on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: text, json: () => JSON.parse(text) }));
    });
    req.on('error', reject);
    req.write(body.slice(0, 10));
    finish = () => req.end(body.slice(10));
  });
  return { response, finish };
}
