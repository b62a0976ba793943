import { cpuProbe } from './cpu.js';
import type { LoadOptions } from './load.js';
import { runTimedLoad, type TimedLoadResult } from './timed-load.js';

/** A timed load with the CPU it cost per request: the server process and the PostgreSQL backends. */
export type Latency = TimedLoadResult & { serverCpuMsPerRequest: number | null; postgresCpuMsPerRequest: number | null };

/** runTimedLoad, sampling CPU around the measured part (after the warm-up). */
export async function timedWithCpu(serverPid: number | undefined, databaseUrl: string, options: Omit<LoadOptions, 'beforeMeasure'>): Promise<Latency> {
  const cpu = cpuProbe(serverPid, databaseUrl);
  const load = await runTimedLoad({ ...options, beforeMeasure: () => cpu.start() });
  const used = await cpu.stop();
  const per = (ms: number | null) => (ms === null || load.totalRequests === 0 ? null : ms / load.totalRequests);
  return { ...load, serverCpuMsPerRequest: per(used.serverMs), postgresCpuMsPerRequest: per(used.postgresMs) };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Figure by figure median of several rounds of the same load (counts are summed, max is the max). */
export function medianOfRounds(rounds: Latency[]): Latency {
  const medOrNull = (values: (number | null)[]) => (values.some((v) => v === null) ? null : median(values as number[]));
  const sum = (f: (r: Latency) => number) => rounds.reduce((a, r) => a + f(r), 0);
  const statuses: Record<string, number> = {};
  for (const r of rounds) for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  return {
    ...rounds[0],
    requestsPerSecond: median(rounds.map((r) => r.requestsPerSecond)),
    p50Ms: median(rounds.map((r) => r.p50Ms)), p95Ms: median(rounds.map((r) => r.p95Ms)), p99Ms: median(rounds.map((r) => r.p99Ms)),
    maxMs: Math.max(...rounds.map((r) => r.maxMs)),
    totalRequests: sum((r) => r.totalRequests), non2xx: sum((r) => r.non2xx), errors: sum((r) => r.errors), timeouts: sum((r) => r.timeouts), statuses,
    serverCpuMsPerRequest: medOrNull(rounds.map((r) => r.serverCpuMsPerRequest)),
    postgresCpuMsPerRequest: medOrNull(rounds.map((r) => r.postgresCpuMsPerRequest)),
  };
}

const fmtMs = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const fmtCpu = (ms: number | null) => (ms === null ? '?' : ms.toFixed(2));

/** One progress line for a measured load. */
export const loadLine = (l: Latency) => `${Math.round(l.requestsPerSecond).toLocaleString('en-US')} req/s, p50 ${fmtMs(l.p50Ms)} ms, p99 ${fmtMs(l.p99Ms)} ms, `
  + `CPU/req ${fmtCpu(l.serverCpuMsPerRequest)} + ${fmtCpu(l.postgresCpuMsPerRequest)} ms (server + PostgreSQL)`
  + (l.non2xx + l.errors + l.timeouts ? `, NON-2xx/errors ${l.non2xx + l.errors + l.timeouts} ${JSON.stringify(l.statuses)}` : '');
