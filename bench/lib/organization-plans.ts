/**
 * The organizations bench's view of the SQL: the exact statements src/organizations/store.ts sends for the
 * name-filtered list and the members page, their EXPLAIN (ANALYZE, BUFFERS) plans, and a census of the plan
 * shapes over rotated names (the plan can change with the value).
 */
import type { CompiledQuery } from 'kysely';
import type pg from 'pg';
import { createOrganizationsStore } from '../../src/organizations/store.js';
import { compileStoreCall, type Explained } from './compile-sql.js';
import { percentile } from './timed-load.js';

export type StoreCall = (store: ReturnType<typeof createOrganizationsStore>) => Promise<unknown>;

/** The SQL (and parameters) src/organizations/store.ts sends for this call. */
export const compile = (call: StoreCall): Promise<CompiledQuery> => compileStoreCall(createOrganizationsStore, call);

export const listCall = (environmentId: string, name: string | undefined, limit: number, cursor?: string): StoreCall =>
  (store) => store.list(environmentId, name === undefined ? {} : { name }, { limit, cursor });
export const membersCall = (environmentId: string, organizationId: string, limit: number, cursor?: string): StoreCall =>
  (store) => store.listMembers(environmentId, organizationId, { limit, cursor });

/**
 * The members statement with its cursor also applied to users.id (equal to m.user_id by the join). Not what
 * the store sends: PostgreSQL does not carry `m.user_id > $c` across the join, so a merge join reads the
 * users index from the environment's first user; this variant shows what the repeated bound saves.
 */
export function withUsersCursor(sql: string): string {
  const bound = /"m"\."user_id" > (\$\d+)/.exec(sql);
  if (!bound) throw new Error(`no cursor bound in: ${sql}`);
  return sql.replace(bound[0], `${bound[0]} and "u"."id" > ${bound[1]}`);
}
export type { Explained } from './compile-sql.js';

/** "Limit → Nested Loop → Index Scan using organization_memberships_pkey [Rows Removed by Filter: 3]" from an EXPLAIN text. */
function shortSummary(plan: string): string {
  const nodes: string[] = [];
  for (const line of plan.split('\n')) {
    const m = /^\s*(?:->\s+)?([A-Z][A-Za-z -]*?(?: using \S+)?)(?: on (\S+)(?: \w+)?)?\s+\(cost=/.exec(line);
    // A bitmap index scan names its index after "on"; other nodes name their table (dropped).
    if (m) nodes.push(m[1] === 'Bitmap Index Scan' ? `${m[1]} on ${m[2]}` : m[1]);
    else if (/^\s+(Rows Removed by Filter|Rows Removed by Index Recheck|Heap Blocks|Sort Method):/.test(line) && nodes.length) {
      nodes[nodes.length - 1] += ` [${line.trim()}]`;
    }
  }
  return nodes.join(' → ');
}

/** Runs the page's statement (optionally rewritten) twice under EXPLAIN (ANALYZE, BUFFERS) (the second is kept) and counts what it matches unlimited. */
export async function explain(pool: pg.Pool, call: StoreCall, unlimited: StoreCall, rewrite: (sql: string) => string = (sql) => sql): Promise<Explained> {
  const query = await compile(call);
  const params = query.parameters as unknown[];
  const sql = rewrite(query.sql);
  await pool.query(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
  const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`, params);
  const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
  const all = await compile(unlimited);
  const count = await pool.query<{ n: string }>(`select count(*) as n from (${all.sql}) q`, all.parameters as unknown[]);
  return {
    sql, parameters: params, plan, summary: shortSummary(plan),
    executionMs: Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN), matches: Number(count.rows[0].n),
  };
}

export interface Census {
  size: number;
  shapes: { shape: string; count: number; p50Ms: number; p95Ms: number; slowest: { ms: number; value: string; plan: string } }[];
}

/** EXPLAIN ANALYZE the statement for `size` rotated values; count the plan shapes and keep each shape's slowest plan. */
export async function planCensus(pool: pg.Pool, size: number, valueOf: (i: number) => string, callOf: (value: string) => StoreCall): Promise<Census> {
  const shapes = new Map<string, { count: number; times: number[]; slowest: { ms: number; value: string; plan: string } }>();
  for (let i = 1; i <= size; i++) {
    const value = valueOf(i);
    const q = await compile(callOf(value));
    const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${q.sql}`, q.parameters as unknown[]);
    const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
    const ms = Number(/Execution Time: ([\d.]+) ms/.exec(plan)?.[1] ?? NaN);
    const shape = shortSummary(plan).replace(/ \[[^\]]*\]/g, '');
    const entry = shapes.get(shape) ?? { count: 0, times: [], slowest: { ms: -1, value, plan: '' } };
    entry.count++;
    entry.times.push(ms);
    if (ms > entry.slowest.ms) entry.slowest = { ms, value, plan };
    shapes.set(shape, entry);
  }
  return {
    size,
    shapes: [...shapes.entries()].map(([shape, e]) => {
      const sorted = [...e.times].sort((a, b) => a - b);
      return { shape, count: e.count, p50Ms: percentile(sorted, 50), p95Ms: percentile(sorted, 95), slowest: e.slowest };
    }).sort((a, b) => b.count - a.count),
  };
}
