import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { createEnvironmentsService } from './environments/service.js';
import { systemClock } from './platform/clock.js';
import { openDatabase } from './platform/db/database.js';
import { migrate } from './platform/db/migrate.js';

async function main() {
  const config = loadConfig();
  const database = await openDatabase(config.databaseUrl ? { url: config.databaseUrl } : { dataDir: config.dataDir });
  await migrate(database.db);
  await bootstrapFirstEnvironment(database.db, config.port);

  const app = await buildApp({
    db: database.db, clock: systemClock, publicPort: config.port, adminToken: config.adminToken, smtpUrl: config.smtpUrl,
    mailFrom: config.mailFrom, trustedProxies: config.trustedProxies, logLevel: config.logLevel,
  });
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'draining in-flight requests');
    await app.close();
    await database.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  await app.listen({ port: config.port, host: config.host });
  const storage = config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `embedded PGlite in ${config.dataDir}`;
  console.log(`Gatehouse listening on http://${config.host}:${config.port} with ${storage}. API reference: /docs`);
}

/** With no environment yet, creates `development` and prints its secret key once. */
async function bootstrapFirstEnvironment(db: Parameters<typeof createEnvironmentsService>[0]['db'], port: number) {
  const environments = createEnvironmentsService({ db, clock: systemClock, defaultFrontendPort: port });
  if ((await environments.count()) > 0) return;
  const env = await environments.create({ name: 'development' });
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
