/**
 * The invitations bench's view of the SQL: the exact statement src/invitations/store.ts sends for a list
 * call, its EXPLAIN (ANALYZE, BUFFERS) plan and a one-line summary of it, and a census of the plan shapes
 * over rotated filter values (the plan changes with the values).
 */
import type { CompiledQuery } from 'kysely';
import type pg from 'pg';
import type { InvitationFilter } from '../../src/invitations/schemas.js';
import { createInvitationsStore } from '../../src/invitations/store.js';
import { compileStoreCall, type Explained } from './compile-sql.js';
import { percentile } from './timed-load.js';

export type { Explained } from './compile-sql.js';

export interface CensusShape {
  shape: string;
  count: number;
  times: number[];
  slowest: { ms: number; filter: InvitationFilter; plan: string };
}

export interface Census {
  size: number;
  shapes: { shape: string; count: number; p50Ms: number; p95Ms: number; slowest: CensusShape['slowest'] }[];
}

/** The SQL (and parameters) src/invitations/store.ts sends for this list call. */
export const compileList = (environmentId: string, filter: InvitationFilter, limit: number, cursor: string | undefined, now: Date): Promise<CompiledQuery> =>
  compileStoreCall(createInvitationsStore, (store) => store.list(environmentId, filter, { limit, cursor }, now));

/** "Limit → Index Scan using invitations_pkey on invitations (Filter)" from an EXPLAIN text. */
export function summarize(plan: string): string {
  const nodes: string[] = [];
  for (const line of plan.split('\n')) {
    const m = /^\s*(?:->\s+)?([A-Z][A-Za-z -]*?(?: using \S+)?(?: on \S+)?)\s+\(cost=/.exec(line);
    if (m) nodes.push(m[1].replace(/ on invitations$/, ''));
    else if (/^\s+(Filter|Recheck Cond|Index Cond|Rows Removed by Filter|Rows Removed by Index Recheck|Heap Blocks|Sort Method):/.test(line) && nodes.length) {
      const detail = line.trim();
      if (/^(Rows Removed|Heap Blocks|Sort Method)/.test(detail)) nodes[nodes.length - 1] += ` [${detail}]`;
    }
  }
  return nodes.join(' → ');
}

export async function explain(pool: pg.Pool, query: CompiledQuery, countQuery: CompiledQuery): Promise<Explained> {
  const params = query.parameters as unknown[];
  // Twice: the first run reads the pages in, the second is the steady state the loads see.
  await pool.query(`EXPLAIN (ANALYZE, BUFFERS) ${query.sql}`, params);
  const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${query.sql}`, params);
  const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
  const execution = /Execution Time: ([\d.]+) ms/.exec(plan);
  const count = await pool.query<{ n: string }>(`select count(*) as n from (${countQuery.sql}) q`, countQuery.parameters as unknown[]);
  return { sql: query.sql, parameters: params, plan, summary: summarize(plan), executionMs: execution ? Number(execution[1]) : NaN, matches: Number(count.rows[0].n) };
}

export interface CensusOptions {
  environmentId: string;
  /** The scenario's filter for the i-th rotated value (i from 1). */
  filter: (i: number) => InvitationFilter;
  cursor: string | undefined;
  pageSize: number;
  size: number;
}

/** EXPLAIN ANALYZE the statement for `size` rotated values; count the plan shapes and keep each shape's slowest plan. */
export async function planCensus(pool: pg.Pool, options: CensusOptions): Promise<Census> {
  const shapes = new Map<string, CensusShape>();
  for (let i = 1; i <= options.size; i++) {
    const filter = options.filter(i);
    const q = await compileList(options.environmentId, filter, options.pageSize, options.cursor, new Date());
    const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${q.sql}`, q.parameters as unknown[]);
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    const ms = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN);
    const shape = summarize(plan).replace(/ \[[^\]]*\]/g, '');
    const entry = shapes.get(shape) ?? { shape, count: 0, times: [], slowest: { ms: -1, filter, plan: '' } };
    entry.count++;
    entry.times.push(ms);
    if (ms > entry.slowest.ms) entry.slowest = { ms, filter, plan };
    shapes.set(shape, entry);
  }
  return {
    size: options.size,
    shapes: [...shapes.values()].map((e) => {
      const sorted = [...e.times].sort((a, b) => a - b);
      return { shape: e.shape, count: e.count, p50Ms: percentile(sorted, 50), p95Ms: percentile(sorted, 95), slowest: e.slowest };
    }).sort((a, b) => b.count - a.count),
  };
}
