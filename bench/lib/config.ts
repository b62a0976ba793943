import { randomBytes } from 'node:crypto';
import type { HttpResponse } from './http.js';

/** GATEHOUSE_ENCRYPTION_KEY of the server under test (required with DATABASE_URL); each run seeds a fresh database. */
export const BENCH_ENCRYPTION_KEY = randomBytes(32).toString('base64');

/** A number from the environment (BENCH_*), or the fallback when unset; anything below `min` stops the bench. */
export function envNumber(name: string, fallback: number, min = 0): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) {
    throw new Error(`${name} must be ${min === 0 ? 'a non-negative number' : `a number of at least ${min}`} (got "${raw}")`);
  }
  return n;
}

/** The body of a probe's answer, or a stop naming the probe when its status is not the expected one. */
export function expectStatus<T = Record<string, unknown>>(what: string, res: HttpResponse, status: number): T {
  if (res.status !== status) throw new Error(`Probe "${what}" answered ${res.status}, expected ${status}: ${res.text}`);
  return res.json<T>();
}

/**
 * The settings every load bench reads the same way: the database to recreate, and the shape of each
 * load (`durationSeconds` measured after `warmupSeconds`, on `connections`), repeated `rounds` times.
 */
export const loadConfig = ({ durationSeconds = 6, warmupSeconds = 2, rounds = 5 } = {}) => ({
  databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gatehouse_bench',
  durationSeconds: envNumber('BENCH_DURATION', durationSeconds, 1),
  warmupSeconds: envNumber('BENCH_WARMUP', warmupSeconds),
  connections: Math.floor(envNumber('BENCH_CONNECTIONS', 32, 1)),
  rounds: Math.floor(envNumber('BENCH_ROUNDS', rounds, 1)),
});
