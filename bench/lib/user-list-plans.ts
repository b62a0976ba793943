/**
 * The users-list bench's view of the SQL: the exact statement src/users/store.ts sends for a list call,
 * its EXPLAIN (ANALYZE, BUFFERS) plan with a one-line summary and the rows it examined, and a census of
 * the plan shapes over rotated filter values (the plan can change with the value).
 */
import type { CompiledQuery } from 'kysely';
import type pg from 'pg';
import type { UserFilter } from '../../src/users/schemas.js';
import { createUsersStore } from '../../src/users/store.js';
import { compileStoreCall } from './compile-sql.js';
import { percentile } from './timed-load.js';

export interface ListPlan {
  sql: string;
  parameters: unknown[];
  plan: string;
  /** "Limit → Index Scan using users_status" */
  summary: string;
  executionMs: number;
  planningMs: number;
  /** Rows the scans produced or threw away (Rows Removed by Filter / Index Recheck): the work behind one page. */
  rowsExamined: number;
  sharedBuffers: number;
}

/** The SQL (and parameters) src/users/store.ts sends for this list call. */
export const compileList = (environmentId: string, filter: UserFilter, limit: number, cursor: string | undefined): Promise<CompiledQuery> =>
  compileStoreCall(createUsersStore, (store) => store.list(environmentId, filter, { limit, cursor }));

const SCAN = /^\s*(?:->\s+)?((?:Parallel )?(?:Index Only Scan|Index Scan|Bitmap Heap Scan|Seq Scan)) .*actual time=[\d.]+\.\.[\d.]+ rows=(\d+) loops=(\d+)/;

/** The plan's nodes, top down, each with its index when it names one: "Limit → Sort → Bitmap Heap Scan → Bitmap Index Scan on users_email_trgm". */
export function summarize(plan: string): string {
  const nodes: string[] = [];
  for (const line of plan.split('\n')) {
    const m = /^\s*(?:->\s+)?([A-Z][A-Za-z -]*?)(?: using (\S+))?(?: on (\S+))?(?: \w+)?\s+\(cost=/.exec(line);
    if (!m) continue;
    const index = m[2] ?? (m[1].startsWith('Bitmap Index Scan') ? m[3] : undefined);
    nodes.push(index ? `${m[1]} ${m[1].startsWith('Bitmap Index') ? 'on' : 'using'} ${index}` : m[1]);
  }
  return nodes.join(' → ');
}

/** Rows the table scans returned plus those their filters and rechecks removed. */
export function rowsExamined(plan: string): number {
  let total = 0;
  for (const line of plan.split('\n')) {
    const scan = SCAN.exec(line);
    if (scan) total += Number(scan[2]) * Number(scan[3]);
    const removed = /Rows Removed by (?:Filter|Index Recheck): (\d+)/.exec(line);
    if (removed) total += Number(removed[1]);
  }
  return total;
}

async function explainOnce(pool: pg.Pool, query: CompiledQuery): Promise<ListPlan> {
  const params = query.parameters as unknown[];
  const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${query.sql}`, params);
  const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
  const top = /Buffers: shared((?: \w+=\d+)+)/.exec(plan)?.[1] ?? '';
  return {
    sql: query.sql, parameters: params, plan, summary: summarize(plan),
    executionMs: Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN),
    planningMs: Number(/Planning Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN),
    rowsExamined: rowsExamined(plan),
    sharedBuffers: [...top.matchAll(/=(\d+)/g)].reduce((a, m) => a + Number(m[1]), 0),
  };
}

/** Runs the page's statement twice under EXPLAIN (ANALYZE, BUFFERS): the first reads pages in, the second (kept) is the steady state. */
export async function explainList(pool: pg.Pool, environmentId: string, filter: UserFilter, limit: number, cursor?: string): Promise<ListPlan> {
  const query = await compileList(environmentId, filter, limit, cursor);
  await explainOnce(pool, query);
  return explainOnce(pool, query);
}

/** How many users of the environment match the filter (after the cursor, when one is given). */
export async function countMatches(pool: pg.Pool, environmentId: string, filter: UserFilter, cursor?: string): Promise<number> {
  const all = await compileList(environmentId, filter, 1_000_000_000, cursor);
  const { rows } = await pool.query<{ n: string }>(`select count(*) as n from (${all.sql}) q`, all.parameters as unknown[]);
  return Number(rows[0].n);
}

export interface Census {
  size: number;
  shapes: { shape: string; count: number; p50Ms: number; p95Ms: number; maxRowsExamined: number; slowest: { ms: number; filter: UserFilter; plan: string } }[];
}

/** EXPLAIN ANALYZE the statement for `size` rotated values (once each); count the plan shapes and keep each shape's slowest plan. */
export async function planCensus(pool: pg.Pool, environmentId: string, filterOf: (i: number) => UserFilter, size: number, limit: number, cursor?: string): Promise<Census> {
  const shapes = new Map<string, { times: number[]; rows: number; slowest: { ms: number; filter: UserFilter; plan: string } }>();
  for (let i = 1; i <= size; i++) {
    const filter = filterOf(i);
    const p = await explainOnce(pool, await compileList(environmentId, filter, limit, cursor));
    const entry = shapes.get(p.summary) ?? { times: [], rows: 0, slowest: { ms: -1, filter, plan: '' } };
    entry.times.push(p.executionMs);
    entry.rows = Math.max(entry.rows, p.rowsExamined);
    if (p.executionMs > entry.slowest.ms) entry.slowest = { ms: p.executionMs, filter, plan: p.plan };
    shapes.set(p.summary, entry);
  }
  return {
    size,
    shapes: [...shapes.entries()].map(([shape, e]) => {
      const sorted = [...e.times].sort((a, b) => a - b);
      return { shape, count: e.times.length, p50Ms: percentile(sorted, 50), p95Ms: percentile(sorted, 95), maxRowsExamined: e.rows, slowest: e.slowest };
    }).sort((a, b) => b.count - a.count),
  };
}
