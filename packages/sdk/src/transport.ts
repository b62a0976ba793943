import createClient, { type Client } from 'openapi-fetch';
import { errorFromResponse, GatehouseError } from './errors.js';
import { OPERATIONS, type OperationId } from './generated/operations.js';
import { localhostFetch } from './localhost-fetch.js';
import type { paths } from './generated/schema.js';
import type { CallOptions } from './types.js';

export interface TransportOptions {
  baseUrl: string;
  /** Headers on every call (the secret key, a session token). */
  headers?: () => Record<string, string>;
  /** Default: the global fetch, reaching `*.localhost` hosts on loopback in Node (see localhost-fetch.ts). */
  fetch?: typeof fetch;
  /** Retries of a 429 or 503 for calls that are safe to repeat (default 3); 0 turns retrying off. */
  maxRetries?: number;
  /** Send cookies cross-origin (a browser app on another origin than the frontend host). */
  credentials?: RequestCredentials;
}

const SAFE_TO_REPEAT = new Set(['GET', 'PUT', 'DELETE']);
const MAX_WAIT_SECONDS = 30;

/** Waits `Retry-After` when the server sent it, else 0.5 s, 1 s, 2 s, ... with jitter; never more than 30 s. */
const backoffMs = (attempt: number, retryAfter: number | null) =>
  1000 * Math.min(MAX_WAIT_SECONDS, retryAfter ?? 0.5 * 2 ** attempt * (0.75 + Math.random() / 2));

/** Splits a flat input into the operation's path parameters, query and body. */
function split(id: OperationId, input: Record<string, unknown> = {}) {
  const op = OPERATIONS[id];
  const pick = (names: readonly string[]) => Object.fromEntries(Object.entries(input).filter(([k, v]) => names.includes(k) && v !== undefined));
  const bodyEntries = Object.entries(input).filter(([k]) => !(op.pathParams as readonly string[]).includes(k) && !(op.query as readonly string[]).includes(k));
  return { path: pick(op.pathParams), query: pick(op.query), body: op.body ? Object.fromEntries(bodyEntries) : undefined };
}

/** Calls operations by id through openapi-fetch: problems thrown as GatehouseError, 429 and 503 retried when safe. */
export function createTransport(options: TransportOptions) {
  const client: Client<paths> = createClient<paths>({ baseUrl: options.baseUrl.replace(/\/$/, ''), fetch: options.fetch ?? localhostFetch, credentials: options.credentials });
  const maxRetries = options.maxRetries ?? 3;

  return async function call(id: OperationId, input?: Record<string, unknown>, callOptions: CallOptions = {}): Promise<unknown> {
    const op = OPERATIONS[id];
    const { path, query, body } = split(id, input);
    // The audit append's key is made once, so every retry of it is the same append.
    const idempotencyKey = op.idempotencyKey ? callOptions.idempotencyKey ?? crypto.randomUUID() : undefined;
    const repeatable = SAFE_TO_REPEAT.has(op.method) || idempotencyKey !== undefined;
    for (let attempt = 0; ; attempt++) {
      const headers = { ...options.headers?.(), ...callOptions.headers, ...(idempotencyKey && { 'idempotency-key': idempotencyKey }) };
      const init = { params: { path, query }, body, headers, signal: callOptions.signal, parseAs: 'text' as const };
      const request = client.request as (method: string, url: string, init: unknown) => Promise<{ data?: string; error?: unknown; response: Response }>;
      const { data, error: failure, response } = await request(op.method.toLowerCase(), op.path, init);
      if (response.ok) return data ? JSON.parse(data) : undefined;
      const error = errorFromResponse(response, failure);
      if (!repeatable || attempt >= maxRetries || (error.status !== 429 && error.status !== 503)) throw error;
      await new Promise((resolve) => setTimeout(resolve, backoffMs(attempt, error.retryAfter)));
    }
  };
}
export type Call = ReturnType<typeof createTransport>;
export { GatehouseError };

/** The methods of one plane, each calling its operation. */
export function planeMethods(call: Call, plane: 'server' | 'client') {
  const ids = (Object.keys(OPERATIONS) as OperationId[]).filter((id) => OPERATIONS[id].plane === plane);
  return Object.fromEntries(ids.map((id) => [id, (input?: Record<string, unknown>, options?: CallOptions) => call(id, input, options)]));
}
