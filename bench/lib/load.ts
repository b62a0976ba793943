import autocannon from 'autocannon';

export interface NextRequest {
  path: string;
  body?: string;
  /** Headers of this request only, on top of the load's (a per-environment key, an Idempotency-Key). */
  headers?: Record<string, string>;
}

export interface LoadOptions {
  name: string;
  /** Base URL of the listening server, e.g. http://127.0.0.1:4000 */
  url: string;
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  /** Called once per request: the path (and body) of that request, so requests can rotate over ids. */
  next: () => NextRequest;
  connections: number;
  durationSeconds: number;
  /** A discarded run first, so JIT, connection pools and caches are warm (0 to skip). */
  warmupSeconds?: number;
  /** Runs after the warm-up, right before the measured load (e.g. to sample CPU counters). */
  beforeMeasure?: () => Promise<void>;
}

/** A load's request shape; the bench adds the URL, connections and durations. */
export type LoadSpec = Omit<LoadOptions, 'url' | 'connections' | 'durationSeconds' | 'warmupSeconds' | 'beforeMeasure'>;

export interface LoadResult {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  totalRequests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  /** Response counts by HTTP status, to tell a 401 storm from a 429 one at a glance. */
  statuses: Record<string, number>;
  connections: number;
  durationSeconds: number;
}

/** Starts a load (requests/s capped at `overallRate` when given); `instance.stop()` ends it early. */
export function startLoad(options: LoadOptions & { overallRate?: number }, durationSeconds = options.durationSeconds) {
  const { method, next } = options;
  const headers = { ...options.headers };
  if (method !== 'GET' && method !== 'DELETE') headers['content-type'] ??= 'application/json';
  const statuses: Record<string, number> = {};
  const instance = autocannon({
    url: options.url,
    connections: options.connections,
    duration: durationSeconds,
    ...(options.overallRate && { overallRate: options.overallRate }),
    timeout: 10,
    requests: [{
      method,
      headers,
      setupRequest: (request) => {
        const { path, body, headers: extra } = next();
        const withHeaders = extra ? { ...request, path, headers: { ...request.headers, ...extra } } : { ...request, path };
        return body === undefined ? withHeaders : { ...withHeaders, body };
      },
    }],
  });
  instance.on('response', (_client: unknown, statusCode: number) => {
    statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
  });
  return { instance, statuses };
}

/** Runs autocannon against a listening server for a fixed duration. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (options.warmupSeconds && options.warmupSeconds > 0) await startLoad(options, options.warmupSeconds).instance;
  await options.beforeMeasure?.();
  const { instance, statuses } = startLoad(options);
  const result = await instance;
  return {
    name: options.name,
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    totalRequests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statuses,
    connections: options.connections,
    durationSeconds: options.durationSeconds,
  };
}
