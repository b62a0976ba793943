import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createTestClock } from '../../src/platform/clock.js';
import { openDatabase, type Database } from '../../src/platform/db/database.js';
import { migrate } from '../../src/platform/db/migrate.js';
import { ADMIN_TOKEN, inMemoryDatabase, TEST_ENCRYPTION_KEY, TEST_PORT } from '../helpers/app.js';

export { INSTANCE } from '../helpers/problem.js';

export { expectProblem } from '../helpers/problem.js';

export interface ThrowawayApp { app: FastifyInstance; database: Database; logLines: () => Record<string, unknown>[]; close(): Promise<void> }

/**
 * An app over its own database, whose log lines are captured: for breaking the database on purpose
 * (closing it, dropping a table) without touching the suite's shared one.
 */
export async function throwawayApp(database: Database, options: { migrate?: boolean } = {}): Promise<ThrowawayApp> {
  if (options.migrate !== false) await migrate(database.db);
  const lines: string[] = [];
  const app = await buildApp({
    db: database.db, clock: createTestClock(), publicPort: TEST_PORT, adminToken: ADMIN_TOKEN, logLevel: 'warn', encryptionKey: TEST_ENCRYPTION_KEY,
    logStream: { write: (line: string) => { lines.push(line); } },
  });
  await app.ready();
  return {
    app, database,
    logLines: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
    close: async () => { await app.close(); await database.close().catch(() => {}); },
  };
}

/** A fresh in-memory PGlite, never the suite's PostgreSQL: tests may break it. */
export const throwawayPglite = async () => openDatabase(await inMemoryDatabase());

/** A PostgreSQL URL where nothing listens: every connection is refused at once. */
export const unreachablePostgres = () => openDatabase({ url: 'postgres://postgres@127.0.0.1:1/gatehouse', poolSize: 1 });

export async function createEnvironment(app: FastifyInstance, name = 'throwaway') {
  const res = await app.inject({ method: 'POST', url: '/api/admin/v1/environments', headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: { name } });
  expect(res.statusCode).toBe(201);
  return res.json() as { id: string; secretKey: string; frontendHost: string };
}

/** Every route the app serves as [METHOD, path], from printRoutes (HEAD and OPTIONS are implicit, so left out). */
export function servedRoutes(app: FastifyInstance): [string, string][] {
  const routes: [string, string][] = [];
  const prefixes: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:│ {3}| {4})*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1].length / 4;
    prefixes.length = depth;
    const path = (prefixes[depth - 1] ?? '') + match[2];
    prefixes[depth] = path;
    for (const method of match[3]?.split(', ') ?? []) {
      if (method !== 'HEAD' && method !== 'OPTIONS') routes.push([method, path]);
    }
  }
  return routes;
}
