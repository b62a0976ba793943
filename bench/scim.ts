/**
 * `npm run bench -- scim`: an identity provider's initial sync into one SCIM directory, on real PostgreSQL
 * against the compiled server: BENCH_USERS users (10,000 by default), each looked up first by
 * `userName eq` (as Okta does before it creates) and then created with POST /Users, BENCH_CONCURRENCY in
 * flight. Reports SCIM operations per second, users per second, and p50/p99 latency per operation.
 */
import { randomBytes } from 'node:crypto';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { http } from './lib/http.js';
import { machineInfo, machineLine, writeResults } from './lib/report.js';
import { startServer } from './lib/server.js';
import type { SummaryEntry } from './lib/summary.js';

export const description = 'SCIM initial sync: users created through POST /Users (after a userName filter each), operations/s and p99';

function readConfig() {
  return {
    databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gatehouse_bench_scim',
    users: Math.floor(envNumber('BENCH_USERS', 10_000, 1)),
    concurrency: Math.floor(envNumber('BENCH_CONCURRENCY', 8, 1)),
  };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: sorted.at(-1) ?? Number.NaN };
};

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  const started = new Date();
  console.log(`scim bench: ${config.users.toLocaleString('en-US')} users, ${config.concurrency} in flight, database ${redact(config.databaseUrl)}`);
  console.log(machineLine());
  await recreateDatabase(config.databaseUrl);
  const adminToken = randomBytes(24).toString('hex');
  const gatehouse = await startServer({
    name: 'gatehouse', script: 'src/main.ts',
    env: { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'warn', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY },
  });
  try {
    const env = expectStatus<{ secretKey: string }>('create environment', await http(`${gatehouse.url}/api/admin/v1/environments`, {
      method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: { name: 'scim-bench' },
    }), 201);
    const server = { authorization: `Bearer ${env.secretKey}` };
    const org = expectStatus<{ id: string }>('create organization', await http(`${gatehouse.url}/api/server/v1/organizations`, { method: 'POST', headers: server, body: { name: 'Acme' } }), 201);
    const dir = expectStatus<{ id: string; token: string }>('create directory', await http(`${gatehouse.url}/api/server/v1/organizations/${org.id}/directories`, {
      method: 'POST', headers: server, body: { name: 'Okta' },
    }), 201);
    const scim = { authorization: `Bearer ${dir.token}`, 'content-type': 'application/scim+json' };
    const base = `${gatehouse.url}/scim/v2/${dir.id}`;

    const lookups: number[] = [];
    const creates: number[] = [];
    let failures = 0;
    let next = 0;
    const timed = async (into: number[], send: () => ReturnType<typeof http>, status: number) => {
      const t0 = performance.now();
      const res = await send();
      into.push(performance.now() - t0);
      if (res.status !== status) failures++;
      return res;
    };
    const worker = async () => {
      for (let i = next++; i < config.users; i = next++) {
        const userName = `user-${i}@scim-bench.example.com`;
        await timed(lookups, () => http(`${base}/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`, { headers: scim }), 200);
        await timed(creates, () => http(`${base}/Users`, {
          method: 'POST', headers: scim,
          body: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName, externalId: `okta-${i}`, name: { givenName: 'User', familyName: String(i) }, emails: [{ value: userName, type: 'work', primary: true }], active: true },
        }), 201);
        if ((i + 1) % Math.max(1, Math.floor(config.users / 10)) === 0) process.stdout.write(`  ${(i + 1).toLocaleString('en-US')} users\n`);
      }
    };
    const t0 = performance.now();
    await Promise.all(Array.from({ length: config.concurrency }, worker));
    const seconds = (performance.now() - t0) / 1000;
    const total = expectStatus<{ totalResults: number }>('count users', await http(`${base}/Users?count=1`, { headers: scim }), 200).totalResults;
    const operationsPerSecond = (lookups.length + creates.length) / seconds;
    const results = {
      users: config.users, concurrency: config.concurrency, seconds, operationsPerSecond, usersPerSecond: creates.length / seconds,
      lookup: summary(lookups), create: summary(creates), failures, provisioned: total,
    };
    console.log(`\n${config.users.toLocaleString('en-US')} users in ${seconds.toFixed(1)} s: ${operationsPerSecond.toFixed(0)} SCIM operations/s `
      + `(${results.usersPerSecond.toFixed(0)} users/s); filter p50 ${results.lookup.p50Ms.toFixed(1)} ms, p99 ${results.lookup.p99Ms.toFixed(1)} ms; `
      + `POST /Users p50 ${results.create.p50Ms.toFixed(1)} ms, p99 ${results.create.p99Ms.toFixed(1)} ms; ${failures} failed; ${total} provisioned`);
    if (failures > 0 || total !== config.users) throw new Error(`${failures} requests failed; ${total} of ${config.users} users provisioned`);
    const file = await writeResults('scim', { startedAt: started.toISOString(), machine: machineInfo(), ...results });
    console.log(`JSON: ${file}`);
    // No aim yet: the figure is the one issue 33's closing note asks for.
    return [{
      name: 'SCIM initial sync, operations/s (filter + POST /Users)', value: operationsPerSecond, unit: '/s', aim: { op: '>=', value: 0 }, spread: null,
      note: `no aim yet; POST /Users p99 ${results.create.p99Ms.toFixed(1)} ms, ${config.concurrency} in flight`,
    }];
  } finally {
    await gatehouse.stop();
  }
}
