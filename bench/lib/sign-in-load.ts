import { cpuProbe } from './cpu.js';
import type { Row } from './report.js';
import { median } from './rounds.js';
import type { RunningServer } from './server.js';
import { percentile } from './timed-load.js';

/** One measured load of sign-ins: how many, how fast, and what each cost the server and PostgreSQL in CPU. */
export interface Round { signIns: number; failures: number; seconds: number; latenciesMs: number[]; serverCpuMs: number | null; postgresCpuMs: number | null }

/** `connections` workers run `signIn` back to back for the warm-up, then for the measured time. */
export async function timedSignIns(server: RunningServer, databaseUrl: string, connections: number, warmupSeconds: number, seconds: number, signIn: (n: number) => Promise<boolean>): Promise<Round> {
  let n = 0;
  const loop = async (until: number, record: (ms: number, ok: boolean) => void) => {
    while (performance.now() < until) {
      const started = performance.now();
      const ok = await signIn(n++).catch(() => false);
      record(performance.now() - started, ok);
    }
  };
  const warmupEnd = performance.now() + warmupSeconds * 1000;
  await Promise.all(Array.from({ length: connections }, () => loop(warmupEnd, () => {})));
  const cpu = cpuProbe(server.child.pid, databaseUrl);
  await cpu.start();
  const latenciesMs: number[] = [];
  let failures = 0;
  const start = performance.now();
  await Promise.all(Array.from({ length: connections }, () => loop(start + seconds * 1000, (ms, ok) => { if (ok) latenciesMs.push(ms); else failures++; })));
  const elapsed = (performance.now() - start) / 1000;
  const used = await cpu.stop();
  const per = (ms: number | null) => (ms === null || latenciesMs.length === 0 ? null : ms / latenciesMs.length);
  return { signIns: latenciesMs.length, failures, seconds: elapsed, latenciesMs: latenciesMs.sort((a, b) => a - b), serverCpuMs: per(used.serverMs), postgresCpuMs: per(used.postgresMs) };
}

export function rowOf(name: string, rounds: Round[]): Row {
  const rates = rounds.map((r) => r.signIns / r.seconds);
  const pick = (f: (r: Round) => number | null) => (rounds.some((r) => f(r) === null) ? null : median(rounds.map((r) => f(r)!)));
  return {
    name, rate: median(rates), p50Ms: median(rounds.map((r) => percentile(r.latenciesMs, 50))), p99Ms: median(rounds.map((r) => percentile(r.latenciesMs, 99))),
    non2xx: rounds.reduce((a, r) => a + r.failures, 0), serverCpuMs: pick((r) => r.serverCpuMs), postgresCpuMs: pick((r) => r.postgresCpuMs),
  };
}

