/**
 * `npm run bench -- start`: how long `npm start` takes to answer /healthz with 200, on a fresh data
 * directory (the first start) and on the same directory again (a restart), and how much memory the
 * server holds once idle, on the embedded database and on PostgreSQL. Each round runs both storages,
 * in alternating order. `npm run build` runs once first, so every start measured is a start and not a build.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCH_ENCRYPTION_KEY, envNumber } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { npmStart, residentMiB, userEnvironment } from './lib/npm-start.js';
import { machineInfo, machineLine, writeResults } from './lib/report.js';
import { fmtSpread, interleaved, roundsFromEnv, statsOf, type Stats } from './lib/rounds.js';
import { REPO_ROOT } from './lib/server.js';
import { entryFromStats, type SummaryEntry } from './lib/summary.js';

export const description = 'npm start: first start on a fresh data directory and a restart to /healthz 200, and the idle RSS of the server, embedded and on PostgreSQL';

/** Issue 13's aims. */
const AIMS = {
  firstStartSeconds: { op: '<=', value: 3 },
  restartSeconds: { op: '<=', value: 1.5 },
  postgresMiB: { op: '<=', value: 120 },
  embeddedMiB: { op: '<=', value: 300 },
} as const;

type Storage = 'embedded' | 'postgres';

function readConfig() {
  return {
    /** Dropped and created again before each first start on PostgreSQL. */
    databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gatehouse_bench',
    rounds: roundsFromEnv(),
    idleSeconds: envNumber('BENCH_IDLE_SECONDS', 5),
  };
}

interface Start { seconds: number; rssMiB: number }
interface Round { first: Start; restart: Start }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One `npm start`: its time to /healthz 200, then, after `idleSeconds` without a request, the server's RSS; then it is stopped. */
async function startAndIdle(env: Record<string, string>, idleSeconds: number): Promise<Start> {
  const started = await npmStart(env);
  try {
    if (started.built) throw new Error('npm start built dist/ before starting: the time would include a build (was the source changed during the run?)');
    await sleep(idleSeconds * 1000);
    return { seconds: started.readyMs / 1000, rssMiB: await residentMiB(started.serverPid) };
  } catch (err) {
    console.error(`--- last output of npm start ---\n${started.output()}`);
    throw err;
  } finally {
    await started.stop();
  }
}

/** A first start and a restart on one data directory (embedded) or one database (PostgreSQL), fresh for the round. */
async function round(storage: Storage, databaseUrl: string, idleSeconds: number): Promise<Round> {
  const dir = await mkdtemp(join(tmpdir(), 'gatehouse-start-bench-'));
  try {
    // On PostgreSQL the data directory holds nothing the service needs; it is set so nothing lands in the repository.
    const env: Record<string, string> = { GATEHOUSE_DATA_DIR: join(dir, 'data') };
    if (storage === 'postgres') {
      await recreateDatabase(databaseUrl);
      Object.assign(env, { DATABASE_URL: databaseUrl, GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY });
    }
    const first = await startAndIdle(env, idleSeconds);
    const restart = await startAndIdle(env, idleSeconds);
    return { first, restart };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function build(): number {
  const started = performance.now();
  const result = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, env: userEnvironment({}), stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) throw new Error(`npm run build failed (${result.status ?? result.signal})`);
  return (performance.now() - started) / 1000;
}

const fmtSeconds = (n: number) => n.toFixed(2);
const fmtMiB = (n: number) => n.toFixed(0);

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  const started = new Date();
  console.log(`start bench: ${config.rounds} rounds of a first start and a restart, embedded and on PostgreSQL (${redact(config.databaseUrl)}), `
    + `RSS after ${config.idleSeconds} s idle`);
  console.log(`${machineLine()}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`npm run build, once, so that no start below includes a build: ${build().toFixed(1)} s`);

  const rounds = await interleaved(['embedded', 'postgres'] as const, config.rounds, async (storage, r) => {
    const result = await round(storage, config.databaseUrl, config.idleSeconds);
    console.log(`  ${storage}, round ${r + 1}/${config.rounds}: first start ${fmtSeconds(result.first.seconds)} s (RSS ${fmtMiB(result.first.rssMiB)} MiB), `
      + `restart ${fmtSeconds(result.restart.seconds)} s (RSS ${fmtMiB(result.restart.rssMiB)} MiB)`);
    return result;
  });

  const of = (storage: Storage, pick: (r: Round) => number) => statsOf(rounds[storage].map(pick));
  // Idle RSS from both starts of every round: the service's memory whichever way it came up.
  const rss = (storage: Storage) => statsOf(rounds[storage].flatMap((r) => [r.first.rssMiB, r.restart.rssMiB]));
  const rows: { measure: string; storage: Storage; stats: Stats; unit: string; aim?: { op: '<='; value: number } }[] = [
    { measure: 'first npm start on a fresh data directory, to /healthz 200', storage: 'embedded', stats: of('embedded', (r) => r.first.seconds), unit: 's', aim: AIMS.firstStartSeconds },
    { measure: 'restart on the existing data directory', storage: 'embedded', stats: of('embedded', (r) => r.restart.seconds), unit: 's', aim: AIMS.restartSeconds },
    { measure: 'idle RSS of the server process (first starts and restarts)', storage: 'embedded', stats: rss('embedded'), unit: 'MiB', aim: AIMS.embeddedMiB },
    { measure: 'first npm start on a fresh database (migrations), to /healthz 200', storage: 'postgres', stats: of('postgres', (r) => r.first.seconds), unit: 's' },
    { measure: 'restart on the existing database', storage: 'postgres', stats: of('postgres', (r) => r.restart.seconds), unit: 's' },
    { measure: 'idle RSS of the server process (first starts and restarts)', storage: 'postgres', stats: rss('postgres'), unit: 'MiB', aim: AIMS.postgresMiB },
  ];
  const file = await writeResults('start', {
    bench: 'start', startedAt: started.toISOString(), finishedAt: new Date().toISOString(),
    config: { ...config, databaseUrl: redact(config.databaseUrl) }, machine: { ...machineInfo(), loadAtEnd: loadavg() }, rounds, rows,
  });

  const fmt = (n: number, unit: string) => (unit === 's' ? fmtSeconds(n) : fmtMiB(n));
  console.log(`\n## start bench, ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC\n`);
  console.log(`${config.rounds} rounds, each a first start and a restart per storage (alternating which storage goes first); `
    + `\`npm start\` spawned as a user runs it (PORT, HOST=127.0.0.1, GATEHOUSE_DATA_DIR; on PostgreSQL DATABASE_URL and GATEHOUSE_ENCRYPTION_KEY); `
    + `RSS is VmRSS of the server process only, ${config.idleSeconds} s after /healthz answered; Node ${process.version}.\n`);
  console.log('| Measure | Storage | Samples | Median | Spread | Aim | |');
  console.log('|---|---|---:|---:|---|---|---|');
  for (const row of rows) {
    const aim = row.aim ? `< ${row.aim.value} ${row.unit}` : '–';
    const met = row.aim ? (row.stats.median <= row.aim.value ? 'met' : '**not met**') : '';
    console.log(`| ${row.measure} | ${row.storage} | ${row.stats.values.length} | ${fmt(row.stats.median, row.unit)} ${row.unit} `
      + `| ${fmtSpread(row.stats, (n) => fmt(n, row.unit))} | ${aim} | ${met} |`);
  }
  console.log(`\nJSON: ${file}`);
  return rows.filter((row) => row.aim).map((row) => entryFromStats(`${row.measure}, ${row.storage}`, row.stats, row.unit, row.aim!));
}
