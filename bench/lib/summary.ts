/**
 * What each bench hands `npm run bench -- all` for its one summary table: every figure that has an aim,
 * as a median over rounds with its spread. A bench added later joins the table by returning these.
 */
import { MIN_ROUNDS, type Comparison, type ComparisonAim, type Stats } from './rounds.js';

export interface SummaryEntry {
  /** The bench that measured it, filled in by the runner when the bench leaves it out. */
  bench?: string;
  name: string;
  value: number;
  /** 'ratio', 'ms', 's', 'MiB', '/s'. */
  unit: string;
  aim: ComparisonAim;
  /** min–max over the rounds; null for a figure measured once. */
  spread: { min: number; max: number } | null;
  /** Rounds behind the median; a ratio from fewer than MIN_ROUNDS does not count. Absent for a figure measured once. */
  rounds?: number;
  /** A second reading of the same figure, e.g. the ratio from CPU per request. */
  note?: string;
}

export const entryFromStats = (name: string, stats: Stats, unit: string, aim: ComparisonAim, note?: string): SummaryEntry => ({
  name, value: stats.median, unit, aim, spread: { min: stats.min, max: stats.max }, rounds: stats.values.length, ...(note && { note }),
});

/** A comparison's requests/s ratio, with its CPU reading as the note. */
export const entryFromComparison = (c: Comparison, aim: ComparisonAim): SummaryEntry =>
  entryFromStats(c.name, c.rate, 'ratio', aim, c.cpu ? `from CPU/req ${c.cpu.median.toFixed(2)} (${c.cpu.min.toFixed(2)}–${c.cpu.max.toFixed(2)})` : undefined);

export const isMet = (e: SummaryEntry) => (e.aim.op === '>=' ? e.value >= e.aim.value : e.value <= e.aim.value);

export const counts = (e: SummaryEntry) => e.rounds === undefined || e.rounds >= MIN_ROUNDS;

function verdict(e: SummaryEntry): string {
  if (!Number.isFinite(e.value)) return '**no result**';
  const met = isMet(e) ? 'met' : '**not met**';
  return counts(e) ? met : `${met}, but ${e.rounds} round${e.rounds === 1 ? '' : 's'}: does not count`;
}

const fmtValue = (n: number, unit: string) => {
  if (!Number.isFinite(n)) return '–';
  if (unit === 'ratio') return n.toFixed(2);
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString('en-US');
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
};
const withUnit = (n: number, unit: string) => (unit === 'ratio' ? fmtValue(n, unit) : `${fmtValue(n, unit)} ${unit}`);

export function markdownSummary(entries: SummaryEntry[]): string {
  return [
    '| Bench | Measure | Median | Spread | Rounds | Aim | | Note |',
    '|---|---|---:|---|---:|---|---|---|',
    ...entries.map((e) => `| ${e.bench ?? ''} | ${e.name} | ${withUnit(e.value, e.unit)} `
      + `| ${e.spread ? `${fmtValue(e.spread.min, e.unit)}–${fmtValue(e.spread.max, e.unit)}` : '–'} | ${e.rounds ?? '–'} `
      + `| ${e.aim.op === '>=' ? '≥' : '≤'} ${withUnit(e.aim.value, e.unit)} | ${verdict(e)} | ${e.note ?? ''} |`),
  ].join('\n');
}
