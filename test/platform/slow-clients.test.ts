import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTP_LIMITS, type HttpLimits } from '../../src/platform/http/limits.js';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { INSTANCE } from '../helpers/problem.js';

/** A raw client on a real socket: what it sends, what it got back, and whether the server closed it. */
interface RawClient { socket: Socket; received: () => string; closed: Promise<void>; isClosed: () => boolean }

async function rawClient(port: number): Promise<RawClient> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  let closed = false;
  socket.setEncoding('utf8').on('data', (chunk: string) => { received += chunk; });
  // The server closes on a client still writing, which may end in a reset: a close all the same (events.once
  // would reject on that 'error' instead of waiting for the 'close' that follows it).
  socket.on('error', () => {});
  const closedPromise = new Promise<void>((resolve) => socket.once('close', () => { closed = true; resolve(); }));
  return { socket, received: () => received, closed: closedPromise, isClosed: () => closed };
}

/** Sends one byte of `text` every `everyMs` until the socket closes; resolves with how many bytes went out. */
function trickle(client: RawClient, text: string, everyMs: number): Promise<number> {
  return new Promise((resolve) => {
    let sent = 0;
    const timer = setInterval(() => {
      if (client.isClosed() || sent === text.length) { clearInterval(timer); resolve(sent); return; }
      client.socket.write(text[sent++]);
    }, everyMs);
  });
}

/** Splits a raw HTTP/1.1 answer into status, lower-cased headers and body. */
function parseAnswer(raw: string) {
  const [head, body] = raw.split('\r\n\r\n', 2);
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { status: Number(statusLine.split(' ')[1]), statusLine, headers, body };
}

// Small limits so each case takes a fraction of a second; the client would need far longer to finish.
const LIMITS: HttpLimits = { ...HTTP_LIMITS, headersTimeoutMs: 300, requestTimeoutMs: 500, timeoutCheckIntervalMs: 50, idleTimeoutMs: 5_000 };

describe('slow clients on a listening server', () => {
  let t: TestApp;
  let port: number;
  let env: TestEnv;
  const logLines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    t = await startTestApp({ httpLimits: LIMITS, logLevel: 'info', logStream: { write: (line) => { logLines.push(JSON.parse(line)); } } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
    env = await t.given.environment();
  });
  afterAll(() => t.close());

  it('answers 408 request_timeout problem+json and closes the connection when a sign-in body trickles in one byte at a time', async () => {
    const client = await rawClient(port);
    const body = JSON.stringify({ email: 'ada@example.com', password: 'a long passphrase' }).padEnd(200, ' ');
    client.socket.write(`POST /_svc/auth/sign-in HTTP/1.1\r\nHost: ${env.frontendHost}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);

    const sent = await trickle(client, body, 20);
    await client.closed;

    expect(sent).toBeLessThan(body.length);
    const answer = parseAnswer(client.received());
    expect(answer.statusLine).toBe('HTTP/1.1 408 Request Timeout');
    expect(answer.headers).toMatchObject({
      'content-type': 'application/problem+json', connection: 'close', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff',
    });
    expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
    expect(JSON.parse(answer.body)).toEqual({
      type: 'urn:gatehouse:problem:request_timeout', title: 'Request Timeout', status: 408,
      detail: 'The request did not arrive in time; the connection is closed.', instance: expect.stringMatching(INSTANCE),
      properties: { code: 'request_timeout' },
    });
    // One info line with the answer's instance; the cut-off body is not mistaken for a database failure.
    const instance = JSON.parse(answer.body).instance;
    expect(logLines.filter((line) => line.instance === instance)).toEqual([expect.objectContaining({ level: 30, code: 'request_timeout' })]);
    expect(logLines.filter((line) => line.code === 'unavailable' || (line.level as number) >= 50)).toEqual([]);
  });

  it('answers 408 and closes the connection when the headers never end', async () => {
    const client = await rawClient(port);
    const sent = await trickle(client, `GET /healthz HTTP/1.1\r\nHost: ${env.frontendHost}\r\n${'X-Slow: 1\r\n'.repeat(100)}\r\n`, 20);
    await client.closed;

    expect(sent).toBeLessThan(100);
    expect(parseAnswer(client.received())).toMatchObject({ status: 408, headers: { 'content-type': 'application/problem+json' } });
  });

  it('answers 408 and closes a connection that sends nothing at all', async () => {
    const client = await rawClient(port);
    await client.closed;
    expect(parseAnswer(client.received())).toMatchObject({ status: 408, headers: { 'content-type': 'application/problem+json' } });
  });

  it('still serves a client that sends its request at once on the same server', async () => {
    const client = await rawClient(port);
    client.socket.write(`GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
    await client.closed;
    const answer = parseAnswer(client.received());
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ status: 'ok' });
  });
});

describe('the connection cap', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await startTestApp({ httpLimits: { ...HTTP_LIMITS, maxConnections: 2 } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  afterAll(() => t.close());

  it('closes connections over the cap at once, unanswered, and accepts again once one of the first closes', async () => {
    const serverSockets: Socket[] = [];
    t.app.server.on('connection', (socket: Socket) => serverSockets.push(socket));
    const first = await rawClient(port);
    const second = await rawClient(port);

    const third = await rawClient(port);
    third.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await third.closed;
    expect(third.received()).toBe('');
    expect(serverSockets).toHaveLength(2);

    first.socket.destroy();
    await once(serverSockets[0], 'close');
    const fourth = await rawClient(port);
    fourth.socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    await fourth.closed;
    expect(parseAnswer(fourth.received()).status).toBe(200);
    second.socket.destroy();
  });
});
