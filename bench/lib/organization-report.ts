/** The organizations bench's printed report: the markdown tables for bench/results/organizations.md, then the plans. */
import { cpus } from 'node:os';
import type { Latency } from './latency.js';
import type { Census, Explained } from './organization-plans.js';
import { markdownComparisons, type Comparison, type ComparisonAim } from './rounds.js';

export interface ScenarioResult {
  key: string;
  name: string;
  request: string;
  /** One connection (for the members pages: the median of the rounds). */
  latency: Latency;
  throughput: Latency;
  rounds: Latency[] | null;
}

export interface Aim { key: string; aim: string; met: boolean }

export interface RateRow {
  name: string;
  /** Median of the rounds (as the other figures of the row). */
  requestsPerSecond: number;
  byRound: number[];
  p95Ms: number;
  serverCpuMsPerRequest: number | null;
  postgresCpuMsPerRequest: number | null;
  failed: number;
}

export interface Report {
  started: Date;
  config: { organizations: number; members: number; durationSeconds: number; warmupSeconds: number; connections: number; pageSize: number; setupSql: string };
  pgVersion: string;
  loadAtStart: number[];
  loadAtEnd: number[];
  results: ScenarioResult[];
  aims: Aim[];
  explained: Record<string, Explained>;
  /** The deep members page with its cursor repeated on users.id (not what the store sends). */
  hinted: Explained;
  census: Record<string, Census>;
  rates: { user: RateRow; organization: RateRow };
  /** create organization / create user, per round. */
  ratio: Comparison;
  createAim: ComparisonAim;
  file: string;
}

const fmtMs = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const fmtCpu = (n: number | null) => (n === null ? '–' : n >= 10 ? n.toFixed(1) : n.toFixed(2));
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const metText = (met: boolean) => (met ? 'met' : '**not met**');

export function printReport(r: Report): void {
  const { config } = r;
  const conn = config.connections;
  const out: string[] = [
    '', `## organizations bench, ${r.started.toISOString().slice(0, 16).replace('T', ' ')} UTC`, '',
    `${fmtInt(config.organizations)} organizations in one environment, one with ${fmtInt(config.members)} active members; `
      + `${config.durationSeconds} s per load after ${config.warmupSeconds} s warm-up; pages of ${config.pageSize}; ${cpus().length} cores; Node ${process.version}; `
      + `PostgreSQL ${r.pgVersion}; load average ${r.loadAtStart[0].toFixed(2)} at start, ${r.loadAtEnd[0].toFixed(2)} at end.`,
  ];
  if (config.setupSql) out.push('', `Setup SQL after seeding: \`${config.setupSql}\``);
  out.push('',
    `| Scenario | Request | Matches | 1 conn: req/s | p50 ms | p95 ms | p99 ms | CPU ms/req server | CPU ms/req PostgreSQL | ${conn} conn: req/s | p95 ms | Aim (p95, 1 conn) | |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|',
    ...r.results.map((s) => {
      const l = s.latency;
      const a = r.aims.find((x) => x.key === s.key)!;
      return `| ${s.name} | ${s.request} | ${fmtInt(r.explained[s.key].matches)} | ${fmtInt(l.requestsPerSecond)} | ${fmtMs(l.p50Ms)} | ${fmtMs(l.p95Ms)} | ${fmtMs(l.p99Ms)} `
        + `| ${fmtCpu(l.serverCpuMsPerRequest)} | ${fmtCpu(l.postgresCpuMsPerRequest)} | ${fmtInt(s.throughput.requestsPerSecond)} | ${fmtMs(s.throughput.p95Ms)} | ${a.aim} | ${metText(a.met)} |`;
    }),
    '',
    `| Create (${conn} conn) | Requests/s (median of rounds) | By round | p95 ms | CPU ms/req server | CPU ms/req PostgreSQL | Failed |`,
    '|---|---:|---|---:|---:|---:|---:|',
    ...[r.rates.user, r.rates.organization].map((x) => `| ${x.name} | ${fmtInt(x.requestsPerSecond)} | ${x.byRound.map(fmtInt).join(', ')} | ${fmtMs(x.p95Ms)} `
      + `| ${fmtCpu(x.serverCpuMsPerRequest)} | ${fmtCpu(x.postgresCpuMsPerRequest)} | ${x.failed} |`),
    '',
    markdownComparisons([{ comparison: r.ratio, aim: r.createAim }]),
    '');
  for (const s of r.results.filter((x) => x.rounds)) out.push(`${s.name}: p95 by round ${s.rounds!.map((l) => fmtMs(l.p95Ms)).join(', ')} ms (median in the table).`);
  for (const s of r.results) {
    for (const l of [s.latency, s.throughput]) {
      if (l.non2xx + l.errors + l.timeouts > 0) out.push(`note: ${s.name} (${l.connections} conn): statuses ${JSON.stringify(l.statuses)}, socket errors ${l.errors}, timeouts ${l.timeouts}`);
    }
  }
  if (Object.keys(r.census).length) {
    out.push('', '### Plan census (EXPLAIN ANALYZE over rotated names)', '', '| Scenario | Plan | Values | p50 ms | p95 ms | Slowest ms |', '|---|---|---:|---:|---:|---:|');
    for (const s of r.results) {
      for (const e of r.census[s.key]?.shapes ?? []) {
        out.push(`| ${s.name} | ${e.shape} | ${e.count} / ${r.census[s.key].size} | ${fmtMs(e.p50Ms)} | ${fmtMs(e.p95Ms)} | ${fmtMs(e.slowest.ms)} (\`${e.slowest.value}\`) |`);
      }
    }
  }
  out.push('', '### Plans (EXPLAIN (ANALYZE, BUFFERS), representative values)', '');
  for (const s of r.results) {
    const e = r.explained[s.key];
    out.push(`#### ${s.name}: ${e.executionMs.toFixed(2)} ms`, '', e.summary, '', '```', e.sql, `-- ${JSON.stringify(e.parameters)}`, e.plan, '```', '');
  }
  const deep = r.results.find((s) => s.key === 'members-deep');
  if (deep) {
    out.push(`#### ${deep.name}, with the cursor repeated on users.id (not what the store sends): ${r.hinted.executionMs.toFixed(2)} ms`, '',
      r.hinted.summary, '', '```', r.hinted.sql, r.hinted.plan, '```', '');
  }
  for (const s of r.results) {
    for (const e of (r.census[s.key]?.shapes ?? []).slice(1)) {
      out.push(`#### ${s.name}, other plan (${e.count} of ${r.census[s.key].size} values), slowest: ${e.slowest.ms.toFixed(2)} ms (\`${e.slowest.value}\`)`, '', '```', e.slowest.plan, '```', '');
    }
  }
  out.push(`JSON: ${r.file}`);
  console.log(out.join('\n'));
}
