import type { FastifyInstance } from 'fastify';
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { createEnvironmentsService } from './environments/service.js';
import { systemCaller } from './platform/caller.js';
import { systemClock } from './platform/clock.js';
import { openDatabase, type Db } from './platform/db/database.js';
import { lockDataDir } from './platform/db/data-dir-lock.js';
import { migrate } from './platform/db/migrate.js';

async function main() {
  const config = loadConfig();
  const unlockDataDir = config.databaseUrl ? () => {} : lockDataDir(config.dataDir);
  const database = await openDatabase(config.databaseUrl ? { url: config.databaseUrl } : { dataDir: config.dataDir });
  await migrate(database.db);
  await bootstrapFirstEnvironment(database.db, config.port);

  const app = await buildApp({
    db: database.db, notifications: database.notifications, clock: systemClock, publicPort: config.port, adminToken: config.adminToken, smtpUrl: config.smtpUrl,
    mailFrom: config.mailFrom, trustedProxies: config.trustedProxies, logLevel: config.logLevel,
  });
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'draining in-flight requests');
    await drain(app);
    await database.close();
    unlockDataDir();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  await app.listen({ port: config.port, host: config.host });
  const storage = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`;
  console.log(`Gatehouse listening on http://${config.host}:${config.port} with ${storage}. API reference: /docs`);
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

/** With no environment yet, creates `development` and prints its secret key once (one process does, see createFirst). */
async function bootstrapFirstEnvironment(db: Db, port: number) {
  const environments = createEnvironmentsService({ db, clock: systemClock, defaultFrontendPort: port });
  const env = await environments.createFirst(systemCaller('bootstrap'));
  if (!env) return;
  console.log([
    '',
    'Created the first environment, "development". The secret key is shown only now; keep it safe:',
    `  environment id:  ${env.id}`,
    `  secret key:      ${env.secretKey}`,
    `  frontend host:   ${env.frontendHost}`,
    '',
    `Try it:  curl -H "Authorization: Bearer ${env.secretKey}" -H 'content-type: application/json' \\`,
    `           -d '{"email":"ada@example.com"}' http://localhost:${port}/api/server/v1/users`,
    'More environments: npx gatehouse env create --name staging   (or the admin API with GATEHOUSE_ADMIN_TOKEN)',
    '',
  ].join('\n'));
}

main().catch((err) => {
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(2);
  }
  console.error(err);
  process.exit(1);
});
