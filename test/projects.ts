// The suite by what a file needs, and which CI pass runs what (.ci/run). vitest.config.ts makes a project of each
// list below; `npm test` runs every project, `npx vitest run --project <name>` one of them. Every file is in exactly
// one project (test/platform/unit-test-projects.test.ts checks it), so every test runs in at least one pass.

/** Needs no database, no server and no browser: the same outcome on any database (the unit project opens none). */
export const UNIT: string[] = [
  'test/**/unit-*.test.ts',
  'test/platform/node-engines.test.ts',
  'test/platform/outbound-addresses.test.ts',
  'test/session-tokens/key-generation-gc.test.ts',
  'test/hosted-pages/messages.test.ts',
  'test/mail/layouts-current.test.ts',
  'test/operations/container-settings.test.ts',
  'test/operations/rolling-upgrade-check.test.ts',
  'test/sdk/session-store.test.ts',
  'test/sdk/session-token-cache.test.ts',
  'test/sdk/verify-webhook.test.ts',
  'test/sdk/webhook-event-types.test.ts',
  'test/sdk/receive-webhooks-guide.test.ts',
  'test/sdk/browser-bundle.test.ts',
];

/**
 * What a person does end to end: a real browser, a built example app, the packed SDK installed in a fresh app,
 * the README pasted into a terminal, the CLI on its embedded data directory. What these add over the API tests is
 * the browser, the build or the package, none of which changes with the database, so they run once (on PGlite).
 */
export const E2E: string[] = [
  'test/browser/**/*.test.ts',
  'test/examples/**/*.test.ts',
  'test/sdk/package-install.test.ts',
  'test/platform/readme-snippets.test.ts',
  'test/cli/gatehouse-cli.test.ts',
  'test/cli/operators-cli.test.ts',
];

/** Two (or TEST_PROCESSES) server processes on one PostgreSQL database; each file skips without TEST_DATABASE_URL. */
export const MULTI_PROCESS: string[] = ['test/multi-process/**/*.test.ts'];

// The rest is the database project: behaviour through the app on a database, run on PGlite and on PostgreSQL.

/**
 * The files whose outcome a pooler in transaction mode can change (the PgBouncer pass): LISTEN/NOTIFY (the shared
 * cache, the job queue's wake-ups, the webhook trigger), named prepared statements (user creation, sign-in),
 * statement and lock limits, sequences and idempotency under concurrency, and every multi-process guarantee.
 * Paths as vitest's filters take them (a file or a folder).
 */
export const POOLED: string[] = [
  'test/multi-process/',
  'test/platform/pgbouncer.test.ts',
  'test/platform/shared-cache-echo.test.ts',
  'test/platform/job-queue.test.ts',
  'test/platform/stuck-database.test.ts',
  'test/platform/maintenance.test.ts',
  'test/platform/retention.test.ts',
  'test/platform/operator-metrics.test.ts',
  'test/session-tokens/',
  'test/environments/',
  'test/mail/',
  'test/webhooks/',
  'test/audit/',
  'test/auth/sign-in.test.ts',
  'test/auth/concurrent-sign-ins.test.ts',
  'test/users/create-user.test.ts',
  'test/sessions/',
  'test/organizations/checks-under-lock.test.ts',
];

/**
 * The database files whose outcome the Node.js version can change (the Node 24 pass, beside the whole unit
 * project): native crypto (signing keys, passkeys, TOTP, sealing, argon2), the server's start and stop, and the SDK.
 */
export const RUNTIME: string[] = [
  'test/session-tokens/',
  'test/passkeys/',
  'test/factors/',
  'test/auth/sign-in.test.ts',
  'test/auth/reset-password.test.ts',
  'test/operations/embedded-backup.test.ts',
  'test/operations/secret-under-another-key.test.ts',
  'test/platform/startup-output.test.ts',
  'test/platform/graceful-shutdown.test.ts',
  'test/sdk/',
  'test/webhooks/delivery.test.ts',
];
