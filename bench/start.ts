/**
 * `npm run bench -- start`: what a user sees after cloning the repository and typing the README's
 * `npm ci && npm start`. The bench clones the repository (its committed HEAD) into a temporary directory
 * and runs `npm ci` there once (which builds dist/), then times `npm start` in that clone to /healthz 200
 * on a fresh data directory (the first start, the README's default ./data) and on the same directory again
 * (a restart), and reads the memory the server holds once idle, on the embedded database and on
 * PostgreSQL. Each round runs both storages, in alternating order; on the embedded database it also times a
 * restart with the container's command (package.json's start script without npm, as the Dockerfile's CMD).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
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
    /** The repository cloned (its committed HEAD): a path or URL git clone takes. */
    cloneFrom: process.env.BENCH_START_REPO || REPO_ROOT,
  };
}

interface Start { seconds: number; rssMiB: number }
/** `containerRestart`: embedded only. */
interface Round { first: Start; restart: Start; containerRestart?: Start }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Clone { dir: string; containerCommand: string[] }

/** One `npm start` (or `command`) in the clone: its time to /healthz 200, then, after `idleSeconds` without a request, the server's RSS; then it is stopped. */
async function startAndIdle(clone: Clone, env: Record<string, string>, idleSeconds: number, command?: string[]): Promise<Start> {
  const started = await npmStart(env, { cwd: clone.dir, command });
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

/**
 * A first start and a restart on the clone's ./data (embedded, removed first) or on one database
 * (PostgreSQL, created again), then on the embedded database a restart as the container runs it.
 */
async function round(clone: Clone, storage: Storage, databaseUrl: string, idleSeconds: number): Promise<Round> {
  const env: Record<string, string> = {};
  if (storage === 'postgres') {
    await recreateDatabase(databaseUrl);
    Object.assign(env, { DATABASE_URL: databaseUrl, GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY });
  } else {
    await rm(join(clone.dir, 'data'), { recursive: true, force: true });
  }
  const first = await startAndIdle(clone, env, idleSeconds);
  const restart = await startAndIdle(clone, env, idleSeconds);
  if (storage === 'postgres') return { first, restart };
  return { first, restart, containerRestart: await startAndIdle(clone, env, idleSeconds, clone.containerCommand) };
}

/** `git clone` of the repository and the README's `npm ci` in it, as a new user does; the seconds npm ci took. */
function cloneAndInstall(from: string, dir: string): number {
  const clone = spawnSync('git', ['clone', '-q', from, dir], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (clone.status !== 0) throw new Error(`git clone ${from} failed (${clone.status ?? clone.signal})`);
  const started = performance.now();
  const install = spawnSync('npm', ['ci'], { cwd: dir, env: userEnvironment({}), stdio: ['ignore', 'ignore', 'inherit'] });
  if (install.status !== 0) throw new Error(`npm ci in the clone failed (${install.status ?? install.signal})`);
  return (performance.now() - started) / 1000;
}

const fmtSeconds = (n: number) => n.toFixed(2);
const fmtMiB = (n: number) => n.toFixed(0);

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  const started = new Date();
  console.log(`start bench: a fresh clone of ${config.cloneFrom}, then ${config.rounds} rounds of a first start and a restart, embedded and on PostgreSQL `
    + `(${redact(config.databaseUrl)}), RSS after ${config.idleSeconds} s idle`);
  console.log(`${machineLine()}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  const parent = await mkdtemp(join(tmpdir(), 'gatehouse-start-bench-'));
  try {
    const dir = join(parent, 'gatehouse');
    console.log(`git clone and npm ci (which builds dist/) in ${dir}: npm ci took ${cloneAndInstall(config.cloneFrom, dir).toFixed(0)} s`);
    const clone: Clone = { dir, containerCommand: JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).scripts.start.split(' ') };
    return await measure(config, clone, started);
  } finally {
    await rm(parent, { recursive: true, force: true });
  }
}

async function measure(config: ReturnType<typeof readConfig>, clone: Clone, started: Date): Promise<SummaryEntry[]> {
  const rounds = await interleaved(['embedded', 'postgres'] as const, config.rounds, async (storage, r) => {
    const result = await round(clone, storage, config.databaseUrl, config.idleSeconds);
    console.log(`  ${storage}, round ${r + 1}/${config.rounds}: first start ${fmtSeconds(result.first.seconds)} s (RSS ${fmtMiB(result.first.rssMiB)} MiB), `
      + `restart ${fmtSeconds(result.restart.seconds)} s (RSS ${fmtMiB(result.restart.rssMiB)} MiB)`
      + (result.containerRestart ? `, restart with the container's command ${fmtSeconds(result.containerRestart.seconds)} s` : ''));
    return result;
  });

  const of = (storage: Storage, pick: (r: Round) => number) => statsOf(rounds[storage].map(pick));
  // Idle RSS from both starts of every round: the service's memory whichever way it came up.
  const rss = (storage: Storage) => statsOf(rounds[storage].flatMap((r) => [r.first.rssMiB, r.restart.rssMiB]));
  const rows: { measure: string; storage: Storage; stats: Stats; unit: string; aim?: { op: '<='; value: number } }[] = [
    { measure: 'first npm start on a fresh data directory, to /healthz 200', storage: 'embedded', stats: of('embedded', (r) => r.first.seconds), unit: 's', aim: AIMS.firstStartSeconds },
    { measure: 'restart on the existing data directory', storage: 'embedded', stats: of('embedded', (r) => r.restart.seconds), unit: 's', aim: AIMS.restartSeconds },
    { measure: `restart with the container's command (${clone.containerCommand.join(' ')})`, storage: 'embedded', stats: of('embedded', (r) => r.containerRestart!.seconds), unit: 's' },
    { measure: 'idle RSS of the server process (first starts and restarts)', storage: 'embedded', stats: rss('embedded'), unit: 'MiB', aim: AIMS.embeddedMiB },
    { measure: 'first npm start on a fresh database (migrations), to /healthz 200', storage: 'postgres', stats: of('postgres', (r) => r.first.seconds), unit: 's' },
    { measure: 'restart on the existing database', storage: 'postgres', stats: of('postgres', (r) => r.restart.seconds), unit: 's' },
    { measure: 'idle RSS of the server process (first starts and restarts)', storage: 'postgres', stats: rss('postgres'), unit: 'MiB', aim: AIMS.postgresMiB },
  ];
  const file = await writeResults('start', {
    bench: 'start', startedAt: started.toISOString(), finishedAt: new Date().toISOString(),
    config: { ...config, databaseUrl: redact(config.databaseUrl) }, clone: clone.dir, machine: { ...machineInfo(), loadAtEnd: loadavg() }, rounds, rows,
  });

  const fmt = (n: number, unit: string) => (unit === 's' ? fmtSeconds(n) : fmtMiB(n));
  console.log(`\n## start bench, ${started.toISOString().slice(0, 16).replace('T', ' ')} UTC\n`);
  console.log(`A fresh clone after \`npm ci\`; ${config.rounds} rounds, each a first start and a restart per storage (alternating which storage goes first); `
    + `\`npm start\` spawned in the clone as a user runs it (PORT, HOST=127.0.0.1, the default ./data; on PostgreSQL DATABASE_URL and GATEHOUSE_ENCRYPTION_KEY); `
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
