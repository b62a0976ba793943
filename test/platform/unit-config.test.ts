import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { ConfigError, databaseOf, housekeepingOf, loadConfig } from '../../src/config.js';
import { serverEntry } from '../helpers/processes.js';

function configError(env: NodeJS.ProcessEnv): string {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected the configuration to be refused');
}

describe('configuration from environment variables', () => {
  it('uses the documented defaults when nothing is set', () => {
    expect(loadConfig({})).toEqual({
      port: 3000, host: 'localhost', dataDir: './data', databaseUrl: undefined, databaseDirectUrl: undefined, databasePooler: 'none', adminToken: undefined, smtpUrl: undefined,
      mailFrom: 'Gatehouse <no-reply@gatehouse.localhost>', trustedProxies: [], logLevel: 'info',
      housekeepingIntervalSeconds: 600, retentionSessionsDays: 30, retentionOutboxDays: 7, statementTimeoutMs: 5000, lockTimeoutMs: 2000,
      jobLeaseSeconds: 60, webhookPrivateTargets: 'allow', jobWorker: 'on', dnsServers: [], dnsTimeoutMs: 5000,
    });
  });

  it('refuses deliveries to private networks by default with DATABASE_URL, and checks the two job and webhook switches', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://db/gatehouse' })).toMatchObject({ webhookPrivateTargets: 'deny', jobWorker: 'on' });
    expect(loadConfig({ DATABASE_URL: 'postgres://db/gatehouse', GATEHOUSE_WEBHOOK_PRIVATE_TARGETS: 'allow', GATEHOUSE_JOB_WORKER: 'only' }))
      .toMatchObject({ webhookPrivateTargets: 'allow', jobWorker: 'only' });
    expect(configError({ GATEHOUSE_WEBHOOK_PRIVATE_TARGETS: 'maybe', GATEHOUSE_JOB_WORKER: 'sometimes' }).split('\n').slice(1)).toEqual([
      '  GATEHOUSE_WEBHOOK_PRIVATE_TARGETS: must be allow or deny (got "maybe")',
      "  GATEHOUSE_JOB_WORKER: must be on (this process serves HTTP and runs the job queue's worker), off (HTTP only) or only (a worker process: jobs only, no HTTP; needs DATABASE_URL) (got \"sometimes\")",
    ]);
  });

  it('reads every variable, splitting trusted proxies on commas', () => {
    const config = loadConfig({
      PORT: '8080', HOST: '0.0.0.0', GATEHOUSE_DATA_DIR: '/var/lib/gatehouse', DATABASE_URL: 'postgres://db/gatehouse',
      GATEHOUSE_ADMIN_TOKEN: 'a-very-long-admin-token', GATEHOUSE_SMTP_URL: 'smtp://mail:25', GATEHOUSE_MAIL_FROM: 'Auth <auth@example.com>',
      GATEHOUSE_TRUSTED_PROXIES: '10.0.0.1, 10.0.0.0/8', LOG_LEVEL: 'warn',
    });
    expect(config).toMatchObject({ port: 8080, host: '0.0.0.0', databaseUrl: 'postgres://db/gatehouse', trustedProxies: ['10.0.0.1', '10.0.0.0/8'], logLevel: 'warn' });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('names every bad variable on its own line, in plain words, with the value it got', () => {
    const message = configError({
      PORT: 'eighty', HOST: '', GATEHOUSE_MAIL_FROM: 'nobody', LOG_LEVEL: 'chatty', GATEHOUSE_TRUSTED_PROXIES: '10.0.0.1, 10.0.0.300, fd00::/8, 10.0.0.0/33, ::1/129, 0.0.0.0/0, 1, office',
    });
    expect(message.split('\n')).toEqual([
      'Invalid configuration:',
      '  PORT: must be an integer from 0 to 65535 (got "eighty")',
      '  HOST: must be a host name or address to listen on, such as localhost or 0.0.0.0 (got "")',
      '  GATEHOUSE_MAIL_FROM: must be a sender address, such as "Auth <auth@example.com>" (got "nobody")',
      '  GATEHOUSE_TRUSTED_PROXIES: must be a comma-separated list of IP addresses, CIDR ranges (such as 10.0.0.0/8 or fd00::/8) '
        + 'and the words loopback, linklocal, uniquelocal (got "10.0.0.300", "10.0.0.0/33", "::1/129", "0.0.0.0/0", "1", "office")',
      '  LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent (got "chatty")',
    ]);
  });

  it.each(['-1', '65536', '80.5', '8e3', ' 80', ''])('refuses PORT=%j', (port) => {
    expect(configError({ PORT: port })).toContain(`PORT: must be an integer from 0 to 65535 (got ${JSON.stringify(port)})`);
  });

  it('never echoes a secret: the admin token is hidden and URL passwords are masked', () => {
    const message = configError({
      DATABASE_URL: 'mysql://gatehouse:db-pass-1@db/gatehouse?password=db-pass-2', GATEHOUSE_ADMIN_TOKEN: 'tok-secret',
      GATEHOUSE_SMTP_URL: 'smtp//mailer:mail-pass@mail:25',
    });
    expect(message.split('\n').slice(1)).toEqual([
      '  DATABASE_URL: must be a URL starting with postgres:// or postgresql:// (got "mysql://gatehouse:***@db/gatehouse?password=***")',
      '  GATEHOUSE_ADMIN_TOKEN: must be at least 16 characters long (value hidden, 10 characters)',
      '  GATEHOUSE_SMTP_URL: must be a URL starting with smtp:// or smtps:// (value hidden: not a URL, and it may hold a password)',
    ]);
    for (const secret of ['db-pass-1', 'db-pass-2', 'tok-secret', 'mail-pass']) expect(message).not.toContain(secret);
  });

  it('reads the metrics port and token, refusing a bad port and never echoing a short token', () => {
    expect(loadConfig({ GATEHOUSE_METRICS_PORT: '9464', GATEHOUSE_METRICS_TOKEN: 'scrape-token-0123456789' }))
      .toMatchObject({ metricsPort: 9464, metricsToken: 'scrape-token-0123456789' });
    expect(loadConfig({})).toMatchObject({ metricsPort: undefined, metricsToken: undefined });
    const message = configError({ GATEHOUSE_METRICS_PORT: '0', GATEHOUSE_METRICS_TOKEN: 'scrape-me' });
    expect(message.split('\n').slice(1)).toEqual([
      '  GATEHOUSE_METRICS_PORT: must be an integer from 1 to 65535 (got "0")',
      '  GATEHOUSE_METRICS_TOKEN: must be at least 16 characters long (value hidden, 9 characters)',
    ]);
    expect(configError({ GATEHOUSE_METRICS_PORT: '94e2' })).toContain('GATEHOUSE_METRICS_PORT: must be an integer from 1 to 65535 (got "94e2")');
  });

  it('reads the housekeeping interval and the retentions of sessions and delivered mail', () => {
    const config = loadConfig({ GATEHOUSE_HOUSEKEEPING_INTERVAL_SECONDS: '60', GATEHOUSE_RETENTION_SESSIONS_DAYS: '90', GATEHOUSE_RETENTION_OUTBOX_DAYS: '1' });
    expect(config).toMatchObject({ housekeepingIntervalSeconds: 60, retentionSessionsDays: 90, retentionOutboxDays: 1 });
    expect(housekeepingOf(config)).toEqual({ intervalSeconds: 60, sessionRetentionDays: 90, outboxRetentionDays: 1, jobRetentionDays: 7, webhookRetentionDays: 30 });
  });

  it('reads the database statement and lock timeouts, and refuses one under 100 ms', () => {
    expect(loadConfig({ GATEHOUSE_DB_STATEMENT_TIMEOUT_MS: '30000', GATEHOUSE_DB_LOCK_TIMEOUT_MS: '500' })).toMatchObject({ statementTimeoutMs: 30_000, lockTimeoutMs: 500 });
    expect(loadConfig({ GATEHOUSE_JOB_LEASE_SECONDS: '5' })).toMatchObject({ jobLeaseSeconds: 5 });
    expect(configError({ GATEHOUSE_JOB_LEASE_SECONDS: '0' })).toContain('GATEHOUSE_JOB_LEASE_SECONDS: must be a whole number of seconds from 1 to 3600 (got "0")');
    expect(configError({ GATEHOUSE_DB_LOCK_TIMEOUT_MS: '50' })).toContain('GATEHOUSE_DB_LOCK_TIMEOUT_MS: must be a whole number of milliseconds from 100 to 3600000 (got "50")');
  });

  it('refuses a retention or interval out of bounds, not whole, or empty, naming the bounds', () => {
    const message = configError({ GATEHOUSE_HOUSEKEEPING_INTERVAL_SECONDS: '5', GATEHOUSE_RETENTION_SESSIONS_DAYS: '0', GATEHOUSE_RETENTION_OUTBOX_DAYS: '1.5' });
    expect(message.split('\n').slice(1)).toEqual([
      '  GATEHOUSE_HOUSEKEEPING_INTERVAL_SECONDS: must be a whole number of seconds from 10 to 86400 (got "5")',
      '  GATEHOUSE_RETENTION_SESSIONS_DAYS: must be a whole number of days from 1 to 3650 (got "0")',
      '  GATEHOUSE_RETENTION_OUTBOX_DAYS: must be a whole number of days from 1 to 3650 (got "1.5")',
    ]);
    expect(configError({ GATEHOUSE_RETENTION_SESSIONS_DAYS: '3651' })).toContain('GATEHOUSE_RETENTION_SESSIONS_DAYS: must be a whole number of days from 1 to 3650 (got "3651")');
    expect(configError({ GATEHOUSE_RETENTION_OUTBOX_DAYS: '' })).toContain('GATEHOUSE_RETENTION_OUTBOX_DAYS: must be a whole number of days from 1 to 3650 (got "")');
  });

  it('takes DATABASE_DIRECT_URL as a transaction pooler in front of DATABASE_URL unless DATABASE_POOLER says otherwise, and gives openDatabase both', () => {
    const [pooled, direct] = ['postgres://gatehouse@pgbouncer:6432/gatehouse', 'postgres://gatehouse@db:5432/gatehouse'];
    expect(loadConfig({ DATABASE_URL: pooled })).toMatchObject({ databaseDirectUrl: undefined, databasePooler: 'none' });
    expect(loadConfig({ DATABASE_URL: pooled, DATABASE_DIRECT_URL: pooled })).toMatchObject({ databasePooler: 'none' });
    const behind = loadConfig({ DATABASE_URL: pooled, DATABASE_DIRECT_URL: direct, GATEHOUSE_DB_STATEMENT_TIMEOUT_MS: '3000' });
    expect(behind).toMatchObject({ databaseUrl: pooled, databaseDirectUrl: direct, databasePooler: 'transaction' });
    expect(databaseOf(behind)).toEqual({ url: pooled, directUrl: direct, pooler: 'transaction', limits: { statementTimeoutMs: 3000, lockTimeoutMs: 2000 } });
    expect(loadConfig({ DATABASE_URL: pooled, DATABASE_DIRECT_URL: direct, DATABASE_POOLER: 'none' })).toMatchObject({ databasePooler: 'none' });
    expect(databaseOf(loadConfig({ GATEHOUSE_DATA_DIR: '/var/lib/gatehouse' }))).toEqual({ dataDir: '/var/lib/gatehouse' });
  });

  it('refuses a transaction pooler without a direct URL, a direct URL without DATABASE_URL, and an unknown pooler, masking passwords', () => {
    expect(configError({ DATABASE_URL: 'postgres://db/gatehouse', DATABASE_POOLER: 'transaction' }).split('\n').slice(1)).toEqual([
      '  DATABASE_POOLER: transaction needs DATABASE_DIRECT_URL, a URL straight to PostgreSQL (LISTEN keeps one session, which a transaction pooler cannot)',
    ]);
    expect(configError({ DATABASE_DIRECT_URL: 'postgres://db/gatehouse' }).split('\n').slice(1)).toEqual([
      '  DATABASE_DIRECT_URL: needs DATABASE_URL (without it the embedded database serves, and has no URL)',
    ]);
    expect(configError({ DATABASE_URL: 'postgres://db/gatehouse', DATABASE_DIRECT_URL: 'mysql://gatehouse:db-pass@db/gatehouse', DATABASE_POOLER: 'session' }).split('\n').slice(1)).toEqual([
      '  DATABASE_DIRECT_URL: must be a URL starting with postgres:// or postgresql://, straight to the PostgreSQL that DATABASE_URL reaches (got "mysql://gatehouse:***@db/gatehouse")',
      '  DATABASE_POOLER: must be transaction (DATABASE_URL leads to a pooler in transaction mode, such as PgBouncer) or none (got "session")',
    ]);
  });

  it('refuses a URL that only starts like one', () => {
    expect(configError({ DATABASE_URL: 'postgres://db:port/gatehouse' }))
      .toContain('DATABASE_URL: must be a URL starting with postgres:// or postgresql:// (got "postgres://db:port/gatehouse")');
  });

  it('accepts addresses, CIDR ranges and the words loopback, linklocal and uniquelocal, all as Fastify trusts them', () => {
    const trustedProxies = ['10.0.0.1', '10.0.0.0/8', '192.168.1.0/24', '::1', 'fd00::/8', '2001:db8::/32', 'loopback', 'linklocal', 'uniquelocal'];
    expect(loadConfig({ GATEHOUSE_TRUSTED_PROXIES: trustedProxies.join(',') }).trustedProxies).toEqual(trustedProxies);
    expect(() => Fastify({ trustProxy: trustedProxies })).not.toThrow();
  });

  it('stops the server with exit code 2 and that message before opening the database, printing nothing on stdout', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'gatehouse-config-'));
    const dataDir = join(parent, 'data');
    try {
      const run = promisify(execFile);
      const failure = await run('node', serverEntry(), {
        env: { ...process.env, DATABASE_URL: '', GATEHOUSE_DATA_DIR: dataDir, GATEHOUSE_TRUSTED_PROXIES: '10.0.0.0/8,10.0.0.300' },
      }).then(() => undefined, (err: { code: number; stdout: string; stderr: string }) => err);
      expect(failure?.code).toBe(2);
      expect(failure?.stderr).toMatch(/^Invalid configuration:\n {2}GATEHOUSE_TRUSTED_PROXIES: must be .* \(got "10\.0\.0\.300"\)\n$/);
      expect(failure?.stdout).toBe('');
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
