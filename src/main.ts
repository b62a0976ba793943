import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { assertCanListen, assertServerConfig, ConfigError, databaseOf, housekeepingOf, listenFailure, loadConfig, type Config } from './config.js';
import type { CreatedEnvironment } from './environments/schemas.js';
import { systemCaller } from './platform/caller.js';
import { systemClock } from './platform/clock.js';
import { createSealer, resolveEncryptionKey } from './platform/crypto/encryption.js';
import { openDatabase, type Database, type Db } from './platform/db/database.js';
import { DataDirLockedError, lockDataDir } from './platform/db/data-dir-lock.js';
import { migrate } from './platform/db/migrate.js';
import { serverStatementTimeoutMs } from './platform/db/pooler.js';
import { serveMetrics } from './platform/http/metrics-server.js';
import type { Metrics } from './platform/metrics.js';
import { announceLocalServer, localAdminToken } from './platform/local-admin.js';
import { closeInOrder } from './platform/shutdown.js';
import { join } from 'node:path';

/** The encryption key, and at the first start of the embedded database where it was generated. */
function encryptionKeyOf(config: Config): Buffer {
  const { key, generatedAt } = resolveEncryptionKey(config.encryptionKey, config.dataDir);
  if (generatedAt) {
    process.stderr.write(`Generated the encryption key of the embedded database's secrets (signing keys) in ${generatedAt} (mode 0600). `
      + 'Back it up with the data directory: without it the signing keys cannot be read. Set GATEHOUSE_ENCRYPTION_KEY to use your own.\n');
  }
  return key;
}

/** Why the server will not start with this key, and what to do: the right key, or (lost) rotating each environment's signing key. */
function wrongKeyMessage(config: Config, { environmentId, keyId }: { environmentId: string; keyId: string }) {
  const source = config.encryptionKey ? 'GATEHOUSE_ENCRYPTION_KEY' : `The encryption key in ${join(config.dataDir, 'encryption.key')}`;
  return `${source} does not open the secrets sealed in this database (signing key ${keyId} of environment ${environmentId}): `
    + 'they were sealed under another key. A restored backup needs the key of the database it was taken from. If that key is lost, '
    + `rotate each environment's signing key (npx gatehouse signing-keys rotate ${environmentId}, with this key) and start again; `
    + 'see docs/operations.md, "The encryption key and signing keys".';
}

type EnvironmentsModule = typeof import('./environments/service.js');
type SessionTokensModule = typeof import('./session-tokens/service.js');

/**
 * Most of the code (the app, Fastify, every domain), imported while the database opens rather than before:
 * PGlite compiles its WebAssembly on other threads, and loading these takes the main thread meanwhile.
 */
const loadServerModules = () => Promise.all([
  import('./app.js'), import('./environments/service.js'), import('./session-tokens/service.js'), import('./operators/first-start.js'),
  import('./platform/metrics.js'),
]);

async function main() {
  const config = loadConfig();
  assertServerConfig(config);
  if (config.jobWorker !== 'only') await assertCanListen(config);
  const embedded = !config.databaseUrl;
  const unlockDataDir = embedded ? lockDataDir(config.dataDir) : () => {};
  const loading = loadServerModules();
  // A failure to load is reported where it is awaited, below; an earlier failure to open the database goes first.
  loading.catch(() => {});
  const database = await openDatabase(databaseOf(config));
  await migrate(database.db);
  if (config.databasePooler === 'transaction') await assertStatementLimitBehindPooler(database.db);
  const encryptionKey = encryptionKeyOf(config);
  const [{ buildApp }, { createEnvironmentsService }, { createFirstSigningKey, signingKeyUnderAnotherKey }, { firstOperatorStep, operatorAccountsOver }, { createMetrics }] = await loading;
  const unreadable = await signingKeyUnderAnotherKey(database.db, createSealer(encryptionKey));
  if (unreadable) {
    await database.close();
    unlockDataDir();
    throw new ConfigError(wrongKeyMessage(config, unreadable));
  }
  // On the embedded database, a developer's machine: the admin API is on with a token kept in the data directory.
  const adminToken = config.adminToken ?? (embedded ? localAdminToken(config.dataDir) : undefined);

  const metrics = createMetrics();
  const app = await buildApp({
    db: database.db, notifications: database.notifications, clock: systemClock, publicPort: config.port, adminToken, smtpUrl: config.smtpUrl,
    mailFrom: config.mailFrom, trustedProxies: config.trustedProxies, logLevel: config.logLevel,
    metrics, poolStats: database.poolStats,
    metricsExposure: config.metricsPort ? { on: 'own_port' } : { on: 'app', token: config.metricsToken }, encryptionKey,
    housekeeping: housekeepingOf(config), jobs: { leaseMs: config.jobLeaseSeconds * 1000 }, baseUrl: config.baseUrl,
    webhooks: { sender: { privateTargets: config.webhookPrivateTargets } }, jobsInBackground: config.jobWorker !== 'off',
    dns: { servers: config.dnsServers, timeoutMs: config.dnsTimeoutMs },
  });
  if (config.jobWorker === 'only') return runWorkerOnly(app, database, metrics, config);
  // A key on the embedded database is a developer's; on a shared one, output that is not a terminal goes to a log.
  await bootstrapFirstEnvironment(database.db, app.log, { port: config.port, showKey: embedded || process.stderr.isTTY === true, encryptionKey },
    { createEnvironmentsService, createFirstSigningKey });
  const metricsServer = config.metricsPort ? await serveMetrics(metrics, { port: config.metricsPort, host: config.host, token: config.metricsToken }) : undefined;
  let closing = false;
  let announced: { forget(): void } | undefined;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'draining in-flight requests');
    const code = await closeInOrder(app.log, [
      ['HTTP server', () => drain(app)], ['metrics server', async () => metricsServer?.close()], ['database', () => database.close()],
    ]);
    announced?.forget();
    unlockDataDir();
    process.exit(code);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  await app.listen({ port: config.port, host: config.host });
  // Schemas compile at their route's first request; the rest compile now, a little at a time, so requests soon find them ready.
  app.compileSchemas().catch((err: unknown) => app.log.error({ err }, 'a route schema does not compile'));
  if (embedded) announced = announceLocalServer(config.dataDir, `http://${config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host}:${config.port}`);
  // stdout carries only JSON log lines (for a log shipper); the human banner goes to stderr.
  app.log.info({ storage: embedded ? 'embedded' : 'postgresql', ...(embedded && { dataDir: config.dataDir }) }, 'Gatehouse ready');
  const storage = embedded ? `embedded PGlite in ${config.dataDir}` : 'PostgreSQL (DATABASE_URL)';
  const admin = config.adminToken ? 'on (GATEHOUSE_ADMIN_TOKEN)'
    : embedded ? `on, with the token in ${join(config.dataDir, 'admin.token')} (the CLI uses it while the server runs: npx gatehouse outbox <envId>)`
      : 'off; set GATEHOUSE_ADMIN_TOKEN to manage environments, keys and mail over HTTP';
  const operatorStep = await firstOperatorStep(operatorAccountsOver(database.db, config.port), config.baseUrl ?? `http://localhost:${config.port}`);
  process.stderr.write(`Gatehouse listening on http://${config.host}:${config.port} with ${storage}. API reference: /docs. Admin API (/api/admin/v1): ${admin}\n${operatorStep ?? ''}`);
  const openMetrics = metricsOpenWarning(config);
  if (openMetrics) {
    app.log.warn({ host: config.host }, 'metrics served without a token on a non-loopback address');
    process.stderr.write(openMetrics);
  }
}

/**
 * GATEHOUSE_JOB_WORKER=only: the job queue's worker (mail, webhooks, data requests) without HTTP, beside
 * API processes started with GATEHOUSE_JOB_WORKER=off. SIGTERM lets the jobs in flight finish.
 */
async function runWorkerOnly(app: FastifyInstance, database: Database, metrics: Metrics, config: Config) {
  await app.ready();
  const metricsServer = config.metricsPort ? await serveMetrics(metrics, { port: config.metricsPort, host: config.host, token: config.metricsToken }) : undefined;
  const shutdown = async () => {
    process.exit(await closeInOrder(app.log, [
      ['job worker', () => app.close()], ['metrics server', async () => metricsServer?.close()], ['database', () => database.close()],
    ]));
  };
  process.once('SIGTERM', () => void shutdown());
  process.once('SIGINT', () => void shutdown());
  app.log.info({ storage: 'postgresql' }, 'Gatehouse job worker ready');
  process.stderr.write('Gatehouse job worker running (GATEHOUSE_JOB_WORKER=only): mail, webhooks and data requests from PostgreSQL (DATABASE_URL); no HTTP.\n');
}

/**
 * Behind a transaction pooler a statement outside a transaction runs with the server connection's own
 * statement timeout (each transaction sets ours, see limitEachTransaction). Without one such a statement
 * could run forever: refuse to serve until the operator gives the role one (docs/operations.md).
 */
async function assertStatementLimitBehindPooler(db: Db) {
  if (await serverStatementTimeoutMs(db) > 0) return;
  throw new ConfigError('DATABASE_POOLER=transaction: statements through the pooler run without a statement timeout (statement_timeout is 0), '
    + 'so one could run forever. Give the role one, as a superuser or as the role itself: ALTER ROLE <role> IN DATABASE <database> SET statement_timeout = \'5s\'; '
    + "or set it in the pooler's connect_query. PgBouncer's server connections opened before keep their settings: RECONNECT on its admin console. See docs/operations.md, Behind PgBouncer.");
}

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || host.startsWith('127.');

/** /metrics without GATEHOUSE_METRICS_TOKEN is fine on loopback; anywhere else it tells anyone the service's load and users' activity. */
function metricsOpenWarning(config: Config): string | undefined {
  if (config.metricsToken || isLoopback(config.host)) return undefined;
  const where = config.metricsPort ? `port ${config.metricsPort}` : '/metrics';
  return `Warning: ${where} answers anyone who can reach ${config.host} (no GATEHOUSE_METRICS_TOKEN). Set GATEHOUSE_METRICS_TOKEN, `
    + 'or keep the metrics on a port only your scraper reaches (GATEHOUSE_METRICS_PORT behind a firewall).\n';
}

/** How long in-flight requests get to finish after SIGTERM before their connections are cut. */
const DRAIN_TIMEOUT_MS = 10_000;

/**
 * Stops accepting connections and waits for in-flight requests to finish. Fastify closes the connections
 * that are idle when the drain starts; a keep-alive connection whose request finishes during the drain
 * would otherwise hold the process open until the client drops it or keepAliveTimeout passes (72 s).
 */
async function drain(app: FastifyInstance) {
  const sweep = setInterval(() => app.server.closeIdleConnections(), 50);
  const deadline = setTimeout(() => {
    app.log.warn({ afterMs: DRAIN_TIMEOUT_MS }, 'drain timed out; closing the remaining connections');
    app.server.closeAllConnections();
  }, DRAIN_TIMEOUT_MS);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
    clearTimeout(deadline);
  }
}

/**
 * With no environment yet, creates `development` (one process does, see createFirst). The log gets its
 * id; the secret key is shown once on stderr when `showKey`, and never written to the log.
 */
async function bootstrapFirstEnvironment(db: Db, log: FastifyBaseLogger, { port, showKey, encryptionKey }: { port: number; showKey: boolean; encryptionKey: Buffer },
  { createEnvironmentsService, createFirstSigningKey }: Pick<EnvironmentsModule, 'createEnvironmentsService'> & Pick<SessionTokensModule, 'createFirstSigningKey'>) {
  const sealer = createSealer(encryptionKey);
  const environments = createEnvironmentsService({
    db, clock: systemClock, defaultFrontendPort: port, onCreate: (trx, environmentId, now) => createFirstSigningKey(trx, environmentId, sealer, now),
  });
  const env = await environments.createFirst(systemCaller('bootstrap'));
  if (!env) return;
  log.info({ environmentId: env.id, frontendHost: env.frontendHost, secretKeyId: env.secretKeyId, secretKeyShown: showKey }, 'created the first environment, "development"');
  process.stderr.write(firstEnvironmentBanner(env, port, showKey));
}

/** What a person reads on stderr about the first environment; the secret key only when `showKey`. */
function firstEnvironmentBanner(env: CreatedEnvironment, port: number, showKey: boolean) {
  return [
    '',
    ...(showKey ? [
      'Created the first environment, "development". The secret key is shown only now; keep it safe:',
      `  environment id:  ${env.id}`,
      `  secret key:      ${env.secretKey}`,
      `  frontend host:   ${env.frontendHost}`,
      '',
      'Try it: create a user with the Server API, then sign them in on the client plane (the frontend host):',
      `  curl -H "Authorization: Bearer ${env.secretKey}" -H 'content-type: application/json' \\`,
      `       -d '{"email":"ada@example.com","password":"a long passphrase"}' http://localhost:${port}/api/server/v1/users`,
      `  curl -H 'content-type: application/json' -d '{"email":"ada@example.com","password":"a long passphrase"}' \\`,
      `       'http://${env.frontendHost}/_svc/auth/sign-in?_is_native=true'`,
    ] : [
      'Created the first environment, "development":',
      `  environment id:  ${env.id}`,
      `  frontend host:   ${env.frontendHost}`,
      'Its secret key is not shown: off a terminal, the output of a server on a shared database (DATABASE_URL) is usually kept in a log.',
      `Issue a key with the same DATABASE_URL:         npx gatehouse keys create ${env.id}`,
      `  or with the admin API (GATEHOUSE_ADMIN_TOKEN): POST /api/admin/v1/environments/${env.id}/secret-keys`,
      `The key created now was never shown; revoke it:  npx gatehouse keys revoke ${env.secretKeyId}`,
    ]),
    'More environments: npx gatehouse env create --name staging   (or the admin API with GATEHOUSE_ADMIN_TOKEN)',
    '',
    '',
  ].join('\n');
}

main().catch((err) => {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(2);
  }
  // The port was free when checked at the start; another process may have taken it since.
  const listening = listenFailure(err as NodeJS.ErrnoException);
  if (listening) {
    console.error(listening);
    process.exit(2);
  }
  if (err instanceof DataDirLockedError) {
    console.error(err.message);
    process.exit(1);
  }
  console.error(err);
  process.exit(1);
});
