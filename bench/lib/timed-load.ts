import autocannon from 'autocannon';
import type { LoadOptions } from './load.js';

export interface TimedLoadResult {
  name: string;
  requestsPerSecond: number;
  /** Exact percentiles of every measured response's time (autocannon's own histogram is whole milliseconds and has no p95). */
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  totalRequests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statuses: Record<string, number>;
  connections: number;
  durationSeconds: number;
}

/** Nearest-rank percentile of an ascending array. */
export const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];

function once(options: LoadOptions, durationSeconds: number) {
  const { method, next } = options;
  const headers = { ...options.headers };
  if (method !== 'GET' && method !== 'DELETE') headers['content-type'] ??= 'application/json';
  const statuses: Record<string, number> = {};
  const times: number[] = [];
  const instance = autocannon({
    url: options.url,
    connections: options.connections,
    duration: durationSeconds,
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
  // autocannon emits (client, statusCode, resBytes, responseTime in fractional ms) for every response.
  instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => {
    statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
    times.push(responseTime);
  });
  return { instance, statuses, times };
}

/**
 * runLoad (bench/lib/load.ts) with the same options, keeping every response time so that p95 is exact.
 * requests/s is completed responses divided by the measured duration.
 */
export async function runTimedLoad(options: LoadOptions): Promise<TimedLoadResult> {
  if (options.warmupSeconds && options.warmupSeconds > 0) await once(options, options.warmupSeconds).instance;
  await options.beforeMeasure?.();
  const { instance, statuses, times } = once(options, options.durationSeconds);
  const result = await instance;
  const sorted = Float64Array.from(times).sort();
  const arr = Array.from(sorted);
  return {
    name: options.name,
    requestsPerSecond: times.length / (result.duration || options.durationSeconds),
    p50Ms: percentile(arr, 50),
    p95Ms: percentile(arr, 95),
    p99Ms: percentile(arr, 99),
    maxMs: arr.length ? arr[arr.length - 1] : 0,
    totalRequests: times.length,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statuses,
    connections: options.connections,
    durationSeconds: options.durationSeconds,
  };
}
