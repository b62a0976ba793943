/**
 * Interleaved rounds: the loads of a comparison run back to back, A B then B A then A B ..., and every
 * ratio is taken within a round, then summarised by its median and spread (min–max). On a shared
 * machine the speed drifts over minutes; within one round both loads see about the same machine, and
 * alternating the order keeps either load from always running first (cold) or second (warm).
 */
import { envNumber } from './config.js';

/** Fewer rounds than this still run, but their summary entries are marked as not counting. */
export const MIN_ROUNDS = 3;

/** BENCH_ROUNDS (default 3, at least 1). */
export const roundsFromEnv = (fallback = MIN_ROUNDS) => Math.floor(envNumber('BENCH_ROUNDS', fallback, 1));

export interface Stats {
  /** In round order. */
  values: number[];
  median: number;
  min: number;
  max: number;
}

export function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function statsOf(values: number[]): Stats {
  return { values, median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/** Round r's order: the keys as given in even rounds, reversed in odd ones. */
export const orderOfRound = <K>(keys: readonly K[], round: number): K[] => (round % 2 === 0 ? [...keys] : [...keys].reverse());

/**
 * Runs `measure(key, round)` for every key in every round, in alternating order, and returns each key's
 * results in round order.
 */
export async function interleaved<K extends string, T>(keys: readonly K[], rounds: number, measure: (key: K, round: number) => Promise<T>): Promise<Record<K, T[]>> {
  const results = Object.fromEntries(keys.map((k) => [k, [] as T[]])) as Record<K, T[]>;
  for (let round = 0; round < rounds; round++) {
    for (const key of orderOfRound(keys, round)) results[key].push(await measure(key, round));
  }
  return results;
}

/** What a round of one load gives a comparison: its rate and its CPU per request (server + PostgreSQL), when known. */
export interface RoundFigures {
  rate: number;
  cpuMs: number | null;
}

export interface Comparison {
  name: string;
  /** Rate of `subject` over rate of `reference`, per round. */
  rate: Stats;
  /** CPU per request of `reference` over that of `subject`, per round: the same direction as `rate` (above 1: the subject is cheaper). */
  cpu: Stats | null;
}

/** Per-round ratios of two loads measured in the same rounds. */
export function compare(name: string, subject: RoundFigures[], reference: RoundFigures[]): Comparison {
  if (subject.length !== reference.length) throw new Error(`${name}: ${subject.length} rounds against ${reference.length}`);
  const rate = statsOf(subject.map((s, r) => s.rate / reference[r].rate));
  const cpuKnown = subject.every((s, r) => s.cpuMs && reference[r].cpuMs);
  const cpu = cpuKnown ? statsOf(subject.map((s, r) => reference[r].cpuMs! / s.cpuMs!)) : null;
  return { name, rate, cpu };
}

/** The CPU per request of a load with the server's and the PostgreSQL backends' columns, null when the server's is unknown. */
export const cpuOf = (l: { serverCpuMsPerRequest: number | null; postgresCpuMsPerRequest: number | null }) =>
  (l.serverCpuMsPerRequest === null ? null : l.serverCpuMsPerRequest + (l.postgresCpuMsPerRequest ?? 0));

export const fmtRatio = (n: number) => n.toFixed(2);
export const fmtSpread = (s: Pick<Stats, 'min' | 'max'>, format = fmtRatio) => `${format(s.min)}–${format(s.max)}`;

/** Median (spread) by round, e.g. "0.81 (0.74–0.85; 0.81, 0.74, 0.85)". */
export const describe = (s: Stats, format = fmtRatio) => `${format(s.median)} (${fmtSpread(s, format)}; ${s.values.map(format).join(', ')})`;

export interface ComparisonAim { op: '>=' | '<='; value: number }

/** The comparisons as a markdown table: median and spread of the requests/s ratio and of the CPU one, and the aim. */
export function markdownComparisons(rows: { comparison: Comparison; aim?: ComparisonAim }[]): string {
  const met = (c: Comparison, aim: ComparisonAim) => (aim.op === '>=' ? c.rate.median >= aim.value : c.rate.median <= aim.value);
  return [
    '| Ratio | Rounds | Requests/s ratio: median | spread | From CPU/req: median | spread | Aim | |',
    '|---|---:|---:|---|---:|---|---:|---|',
    ...rows.map(({ comparison: c, aim }) => `| ${c.name} | ${c.rate.values.length} | ${fmtRatio(c.rate.median)} | ${fmtSpread(c.rate)} `
      + `| ${c.cpu ? fmtRatio(c.cpu.median) : '–'} | ${c.cpu ? fmtSpread(c.cpu) : '–'} `
      + `| ${aim ? `${aim.op === '>=' ? '≥' : '≤'} ${fmtRatio(aim.value)}` : '–'} | ${aim ? (met(c, aim) ? 'met' : '**not met**') : ''} |`),
  ].join('\n');
}
