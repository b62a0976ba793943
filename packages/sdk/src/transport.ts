import createClient, { type Client } from 'openapi-fetch';
import { errorFromResponse, GatehouseError, sdkError } from './errors.js';
import { OPERATIONS, type OperationId } from './generated/operations.js';
import { localhostFetch } from './localhost-fetch.js';
import type { paths } from './generated/schema.js';
import type { CallOptions, Credentials } from './types.js';

export interface TransportOptions {
  baseUrl: string;
  /** Headers on every call (the secret key, a session token). */
  headers?: (() => Record<string, string>) | undefined;
  /** Default: the global fetch, reaching `*.localhost` hosts on loopback in Node (see localhost-fetch.ts). */
  fetch?: ((request: Request) => Promise<Response>) | undefined;
  /** Retries of a 429 or 503 for calls that are safe to repeat (default 3); 0 turns retrying off. */
  maxRetries?: number | undefined;
  /** Send cookies cross-origin (a browser app on another origin than the frontend host). */
  credentials?: Credentials | undefined;
  /** Gives up on an attempt after this many milliseconds with a `timeout` error (default: no limit); a call can set its own. */
  timeoutMs?: number | undefined;
}

const SAFE_TO_REPEAT = new Set(['GET', 'PUT', 'DELETE']);
const MAX_WAIT_SECONDS = 30;

/** Waits `Retry-After` when the server sent it, else 0.5 s, 1 s, 2 s, ... with jitter; never more than 30 s. */
const backoffMs = (attempt: number, retryAfter: number | null) =>
  1000 * Math.min(MAX_WAIT_SECONDS, retryAfter ?? 0.5 * 2 ** attempt * (0.75 + Math.random() / 2));

/**
 * Splits a flat input into the operation's path parameters, query and body. A key the operation does not
 * take is refused by name: sent, it would be dropped or ignored by the server, and the call would do
 * something other than what was asked (`listUsers({ email })` listing everyone).
 */
function split(id: OperationId, input: Record<string, unknown> = {}) {
  const op = OPERATIONS[id];
  const params: readonly string[] = [...op.pathParams, ...op.query];
  const bodyNames = op.body as readonly string[] | 'any' | null;
  for (const key of Object.keys(input)) {
    if (params.includes(key) || bodyNames === 'any' || bodyNames?.includes(key)) continue;
    const known = [...params, ...(bodyNames ?? [])].filter((name) => !name.startsWith('_'));
    throw sdkError('unknown_input', `${id}: unknown input \`${key}\` (${known.length ? `it takes ${known.join(', ')}` : 'it takes no input'})`);
  }
  const pick = (names: readonly string[]) => Object.fromEntries(Object.entries(input).filter(([k, v]) => names.includes(k) && v !== undefined));
  const bodyEntries = Object.entries(input).filter(([k]) => !params.includes(k));
  return { path: pick(op.pathParams), query: pick(op.query), body: bodyNames ? Object.fromEntries(bodyEntries) : undefined };
}

/** The operation's address, for an error that got no answer to quote. */
const urlOf = (baseUrl: string, id: OperationId, path: Record<string, unknown>) =>
  baseUrl + OPERATIONS[id].path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(path[name])));

/** The caller's signal and the attempt's time limit as one signal, and which of them ended the attempt. */
function attemptSignal(signal: AbortSignal | undefined, timeoutMs: number | undefined) {
  const timer = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
  const signals = [signal, timer].filter((s): s is AbortSignal => s !== undefined);
  return { signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0], timedOut: () => timer?.aborted === true && !signal?.aborted };
}

/** Calls operations by id through openapi-fetch: problems thrown as GatehouseError, 429 and 503 retried when safe. */
export function createTransport(options: TransportOptions) {
  const baseUrl = options.baseUrl.replace(/\/$/, '');
  const client: Client<paths> = createClient<paths>({
    baseUrl, fetch: options.fetch ?? localhostFetch, ...(options.credentials && { credentials: options.credentials }),
  });
  const request = client.request as (method: string, url: string, init: unknown) => Promise<{ data?: string; error?: unknown; response: Response }>;
  const maxRetries = options.maxRetries ?? 3;

  /** One attempt; no answer at all (refused connection, DNS, a time limit) becomes a GatehouseError naming the URL. */
  async function attempt(id: OperationId, parts: ReturnType<typeof split>, headers: Record<string, string>, callOptions: CallOptions) {
    const op = OPERATIONS[id];
    const timeoutMs = callOptions.timeoutMs ?? options.timeoutMs;
    const { signal, timedOut } = attemptSignal(callOptions.signal, timeoutMs);
    const init = { params: { path: parts.path, query: parts.query }, body: parts.body, headers, signal, parseAs: 'text' as const };
    try {
      return await request(op.method.toLowerCase(), op.path, init);
    } catch (err) {
      const url = `${op.method} ${urlOf(baseUrl, id, parts.path)}`;
      if (timedOut()) throw sdkError('timeout', `${id}: no answer from ${url} within ${timeoutMs} ms`, err);
      // The caller's own abort stays the AbortError it expects.
      if (callOptions.signal?.aborted || err instanceof GatehouseError) throw err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw sdkError('network_error', `${id}: could not reach ${url} (${cause?.code ?? cause?.message ?? (err as Error).message})`, err);
    }
  }

  return async function call(id: OperationId, input?: Record<string, unknown>, callOptions: CallOptions = {}): Promise<unknown> {
    const op = OPERATIONS[id];
    const parts = split(id, input);
    // The audit append's key is made once, so every retry of it is the same append.
    const idempotencyKey = op.idempotencyKey ? callOptions.idempotencyKey ?? crypto.randomUUID() : undefined;
    const repeatable = SAFE_TO_REPEAT.has(op.method) || idempotencyKey !== undefined;
    for (let tries = 0; ; tries++) {
      const headers = { ...options.headers?.(), ...callOptions.headers, ...(idempotencyKey && { 'idempotency-key': idempotencyKey }) };
      const { data, error: failure, response } = await attempt(id, parts, headers, callOptions);
      if (response.ok) return data ? JSON.parse(data) : undefined;
      const error = errorFromResponse(response, failure);
      if (!repeatable || tries >= maxRetries || (error.status !== 429 && error.status !== 503)) throw error;
      await new Promise((resolve) => setTimeout(resolve, backoffMs(tries, error.retryAfter)));
    }
  };
}
export type Call = ReturnType<typeof createTransport>;
export { GatehouseError };

/** The methods of one plane, each calling its operation. */
export function planeMethods(call: Call, plane: 'server' | 'client' | 'admin') {
  const ids = (Object.keys(OPERATIONS) as OperationId[]).filter((id) => OPERATIONS[id].plane === plane);
  return Object.fromEntries(ids.map((id) => [id, (input?: Record<string, unknown>, options?: CallOptions) => call(id, input, options)]));
}
