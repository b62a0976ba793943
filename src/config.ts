import { lookup } from 'node:dns/promises';
import { createServer, isIP } from 'node:net';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { parseEncryptionKey } from './platform/crypto/encryption.js';
import { DEFAULT_MAIL_FROM } from './platform/mail/mailer.js';
import type { DatabaseOptions } from './platform/db/database.js';
import { STATEMENT_LIMITS } from './platform/db/pool.js';
import { POOLERS, poolerBetween } from './platform/db/pooler.js';
import { JOB_WORKER_DEFAULTS } from './platform/jobs/worker.js';
import { DNS_TIMEOUT_MS } from './organization-domains/dns.js';
import { HOUSEKEEPING_DEFAULTS, type Housekeeping } from './platform/maintenance.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const ConfigSchema = Type.Object({
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  host: Type.String({ minLength: 1 }),
  dataDir: Type.String({ minLength: 1 }),
  databaseUrl: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  databaseDirectUrl: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  databasePooler: Type.Union(POOLERS.map((p) => Type.Literal(p))),
  adminToken: Type.Optional(Type.String({ minLength: 16 })),
  smtpUrl: Type.Optional(Type.String({ pattern: '^smtps?://' })),
  mailFrom: Type.String({ pattern: '@' }),
  trustedProxies: Type.Array(Type.String()),
  logLevel: Type.Union(LOG_LEVELS.map((l) => Type.Literal(l))),
  metricsPort: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  metricsToken: Type.Optional(Type.String({ minLength: 16 })),
  encryptionKey: Type.Optional(Type.String({ minLength: 1 })),
  housekeepingIntervalSeconds: Type.Integer({ minimum: 10, maximum: 86_400 }),
  retentionSessionsDays: Type.Integer({ minimum: 1, maximum: 3650 }),
  retentionOutboxDays: Type.Integer({ minimum: 1, maximum: 3650 }),
  statementTimeoutMs: Type.Integer({ minimum: 100, maximum: 3_600_000 }),
  lockTimeoutMs: Type.Integer({ minimum: 100, maximum: 3_600_000 }),
  jobLeaseSeconds: Type.Integer({ minimum: 1, maximum: 3600 }),
  webhookPrivateTargets: Type.Union([Type.Literal('allow'), Type.Literal('deny')]),
  jobWorker: Type.Union([Type.Literal('on'), Type.Literal('off'), Type.Literal('only')]),
  baseUrl: Type.Optional(Type.String({ pattern: '^https?://[^/]+$' })),
  dnsServers: Type.Array(Type.String()),
  dnsTimeoutMs: Type.Integer({ minimum: 100, maximum: 60_000 }),
});
export type Config = Static<typeof ConfigSchema>;
type Key = keyof Config;

export class ConfigError extends Error {}

/** A DNS server as Resolver.setServers takes it: an IP address, `IPv4:port` or `[IPv6]:port` (never a host name). */
export function isDnsServerEntry(entry: string): boolean {
  const match = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry) ?? /^([^:]+)(?::(\d{1,5}))?$/.exec(entry);
  if (!match) return isIP(entry) === 6;
  return isIP(match[1]!) !== 0 && (match[2] === undefined || (Number(match[2]) >= 1 && Number(match[2]) <= 65535));
}

/** The names proxy-addr (Fastify's trustProxy) expands to address ranges. */
const PROXY_KEYWORDS = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * An address, a CIDR range or a keyword, as Fastify's trustProxy accepts them. A bad entry would only fail
 * when Fastify compiles the list, after the database is open; a /0 range is refused there too.
 */
export function isTrustedProxyEntry(entry: string): boolean {
  if (PROXY_KEYWORDS.includes(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address!);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) >= 1 && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * Each setting's variable, what it allows in plain words, what the schema cannot say, and whether its value
 * is a secret (never printed) or a URL (printed with its password masked).
 */
const VARIABLES: Record<Key, { name: string; rule: string; check?: (value: never) => boolean; show?: 'hidden' | 'url' }> = {
  port: { name: 'PORT', rule: 'must be an integer from 0 to 65535' },
  host: { name: 'HOST', rule: 'must be a host name or address to listen on, such as localhost or 0.0.0.0' },
  dataDir: { name: 'GATEHOUSE_DATA_DIR', rule: 'must be a directory path' },
  databaseUrl: { name: 'DATABASE_URL', rule: 'must be a URL starting with postgres:// or postgresql://', check: URL.canParse, show: 'url' },
  databaseDirectUrl: {
    name: 'DATABASE_DIRECT_URL', rule: 'must be a URL starting with postgres:// or postgresql://, straight to the PostgreSQL that DATABASE_URL reaches', check: URL.canParse, show: 'url',
  },
  databasePooler: { name: 'DATABASE_POOLER', rule: 'must be transaction (DATABASE_URL leads to a pooler in transaction mode, such as PgBouncer) or none' },
  adminToken: { name: 'GATEHOUSE_ADMIN_TOKEN', rule: 'must be at least 16 characters long', show: 'hidden' },
  smtpUrl: { name: 'GATEHOUSE_SMTP_URL', rule: 'must be a URL starting with smtp:// or smtps://', check: URL.canParse, show: 'url' },
  mailFrom: { name: 'GATEHOUSE_MAIL_FROM', rule: 'must be a sender address, such as "Auth <auth@example.com>"' },
  trustedProxies: {
    name: 'GATEHOUSE_TRUSTED_PROXIES',
    rule: 'must be a comma-separated list of IP addresses, CIDR ranges (such as 10.0.0.0/8 or fd00::/8) and the words loopback, linklocal, uniquelocal',
    check: (entries: string[]) => entries.every(isTrustedProxyEntry),
  },
  logLevel: { name: 'LOG_LEVEL', rule: `must be one of ${LOG_LEVELS.join(', ')}` },
  metricsPort: { name: 'GATEHOUSE_METRICS_PORT', rule: 'must be an integer from 1 to 65535' },
  metricsToken: { name: 'GATEHOUSE_METRICS_TOKEN', rule: 'must be at least 16 characters long', show: 'hidden' },
  encryptionKey: {
    name: 'GATEHOUSE_ENCRYPTION_KEY', rule: 'must be 32 random bytes as 64 hex digits or base64 (openssl rand -base64 32)',
    check: (value: string) => parseEncryptionKey(value) !== undefined, show: 'hidden',
  },
  housekeepingIntervalSeconds: { name: 'GATEHOUSE_HOUSEKEEPING_INTERVAL_SECONDS', rule: 'must be a whole number of seconds from 10 to 86400' },
  retentionSessionsDays: { name: 'GATEHOUSE_RETENTION_SESSIONS_DAYS', rule: 'must be a whole number of days from 1 to 3650' },
  retentionOutboxDays: { name: 'GATEHOUSE_RETENTION_OUTBOX_DAYS', rule: 'must be a whole number of days from 1 to 3650' },
  statementTimeoutMs: { name: 'GATEHOUSE_DB_STATEMENT_TIMEOUT_MS', rule: 'must be a whole number of milliseconds from 100 to 3600000' },
  lockTimeoutMs: { name: 'GATEHOUSE_DB_LOCK_TIMEOUT_MS', rule: 'must be a whole number of milliseconds from 100 to 3600000' },
  jobLeaseSeconds: { name: 'GATEHOUSE_JOB_LEASE_SECONDS', rule: 'must be a whole number of seconds from 1 to 3600' },
  webhookPrivateTargets: { name: 'GATEHOUSE_WEBHOOK_PRIVATE_TARGETS', rule: 'must be allow or deny' },
  jobWorker: { name: 'GATEHOUSE_JOB_WORKER', rule: "must be on (this process serves HTTP and runs the job queue's worker), off (HTTP only) or only (a worker process: jobs only, no HTTP; needs DATABASE_URL)" },
  dnsServers: {
    name: 'GATEHOUSE_DNS_SERVERS', rule: 'must be comma-separated DNS server addresses with an optional port, such as 1.1.1.1,127.0.0.1:5353,[::1]:53',
    check: (entries: string[]) => entries.every(isDnsServerEntry),
  },
  dnsTimeoutMs: { name: 'GATEHOUSE_DNS_TIMEOUT_MS', rule: 'must be a whole number of milliseconds from 100 to 60000' },
  baseUrl: { name: 'GATEHOUSE_BASE_URL', rule: 'must be the origin people reach the service at, such as https://auth.example.com (no path)', check: URL.canParse },
};

// Digits only: Number('') is 0 (a random port) and Number('8e3') is 8000.
const digits = (typed: string) => (/^\d+$/.test(typed) ? Number(typed) : Number.NaN);
/** A whole number from the variable, or the default when it is unset (an empty value is a mistake, not unset). */
const wholeNumber = (typed: string | undefined, fallback: number) => (typed === undefined ? fallback : digits(typed));

/** Every environment variable the service reads, parsed and validated in one place, before anything starts. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const raw = {
    port: env.PORT === undefined ? 3000 : digits(env.PORT),
    host: env.HOST ?? 'localhost',
    dataDir: env.GATEHOUSE_DATA_DIR ?? './data',
    databaseUrl: env.DATABASE_URL || undefined,
    databaseDirectUrl: env.DATABASE_DIRECT_URL || undefined,
    databasePooler: env.DATABASE_POOLER || poolerBetween(env.DATABASE_URL ?? '', env.DATABASE_DIRECT_URL || undefined),
    adminToken: env.GATEHOUSE_ADMIN_TOKEN || undefined,
    smtpUrl: env.GATEHOUSE_SMTP_URL || undefined,
    mailFrom: env.GATEHOUSE_MAIL_FROM ?? DEFAULT_MAIL_FROM,
    trustedProxies: (env.GATEHOUSE_TRUSTED_PROXIES ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    logLevel: env.LOG_LEVEL ?? 'info',
    metricsPort: env.GATEHOUSE_METRICS_PORT === undefined || env.GATEHOUSE_METRICS_PORT === '' ? undefined : digits(env.GATEHOUSE_METRICS_PORT),
    metricsToken: env.GATEHOUSE_METRICS_TOKEN || undefined,
    encryptionKey: env.GATEHOUSE_ENCRYPTION_KEY || undefined,
    housekeepingIntervalSeconds: wholeNumber(env.GATEHOUSE_HOUSEKEEPING_INTERVAL_SECONDS, HOUSEKEEPING_DEFAULTS.intervalSeconds),
    retentionSessionsDays: wholeNumber(env.GATEHOUSE_RETENTION_SESSIONS_DAYS, HOUSEKEEPING_DEFAULTS.sessionRetentionDays),
    retentionOutboxDays: wholeNumber(env.GATEHOUSE_RETENTION_OUTBOX_DAYS, HOUSEKEEPING_DEFAULTS.outboxRetentionDays),
    statementTimeoutMs: wholeNumber(env.GATEHOUSE_DB_STATEMENT_TIMEOUT_MS, STATEMENT_LIMITS.statementTimeoutMs),
    lockTimeoutMs: wholeNumber(env.GATEHOUSE_DB_LOCK_TIMEOUT_MS, STATEMENT_LIMITS.lockTimeoutMs),
    jobLeaseSeconds: wholeNumber(env.GATEHOUSE_JOB_LEASE_SECONDS, JOB_WORKER_DEFAULTS.leaseMs / 1000),
    // Loopback receivers are the norm in development (the embedded database), a risk in production.
    webhookPrivateTargets: env.GATEHOUSE_WEBHOOK_PRIVATE_TARGETS || (env.DATABASE_URL ? 'deny' : 'allow'),
    jobWorker: env.GATEHOUSE_JOB_WORKER || 'on',
    baseUrl: env.GATEHOUSE_BASE_URL?.replace(/\/+$/, '') || undefined,
    // Domain verification's resolvers; none: the system's (what /etc/resolv.conf names).
    dnsServers: (env.GATEHOUSE_DNS_SERVERS ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    dnsTimeoutMs: wholeNumber(env.GATEHOUSE_DNS_TIMEOUT_MS, DNS_TIMEOUT_MS),
  };
  const lines = (Object.keys(VARIABLES) as Key[]).flatMap((key) => {
    const value = raw[key];
    const { name, rule, check } = VARIABLES[key];
    if (value === undefined) return []; // an optional variable left unset
    const valid = Value.Check(ConfigSchema.properties[key], value) && (check?.(value as never) ?? true);
    return valid ? [] : [`  ${name}: ${rule} (${shown(key, env[name] ?? String(value), raw.trustedProxies)})`];
  });
  lines.push(...databaseCombination(raw));
  if (lines.length > 0) throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  return Object.freeze(raw as Config);
}

/** The database variables that only make sense together. */
function databaseCombination({ databaseUrl, databaseDirectUrl, databasePooler }: { databaseUrl?: string; databaseDirectUrl?: string; databasePooler: string }): string[] {
  if (databaseDirectUrl && !databaseUrl) return ['  DATABASE_DIRECT_URL: needs DATABASE_URL (without it the embedded database serves, and has no URL)'];
  if (databasePooler === 'transaction' && (!databaseDirectUrl || databaseDirectUrl === databaseUrl)) {
    return ['  DATABASE_POOLER: transaction needs DATABASE_DIRECT_URL, a URL straight to PostgreSQL (LISTEN keeps one session, which a transaction pooler cannot)'];
  }
  return [];
}

/** What the operator typed (PORT=eighty, not NaN), without ever echoing a secret back. */
function shown(key: Key, typed: string, trustedProxies: string[]): string {
  const { show } = VARIABLES[key];
  if (show === 'hidden') return `value hidden, ${typed.length} characters`;
  if (show === 'url') return maskedUrl(typed);
  if (key === 'trustedProxies') return `got ${trustedProxies.filter((e) => !isTrustedProxyEntry(e)).map((e) => JSON.stringify(e)).join(', ')}`;
  return `got ${JSON.stringify(typed)}`;
}

/** The URL with its password (in the userinfo or a password= parameter) replaced by ***. */
function maskedUrl(typed: string): string {
  if (!URL.canParse(typed)) return typed.includes('@') ? 'value hidden: not a URL, and it may hold a password' : `got ${JSON.stringify(typed)}`;
  const url = new URL(typed);
  if (url.password) url.password = '***';
  for (const name of [...url.searchParams.keys()]) {
    if (/pass|secret|token/i.test(name)) url.searchParams.set(name, '***');
  }
  return `got ${JSON.stringify(url.href.replaceAll('%2A%2A%2A', '***'))}`;
}

/**
 * What the server needs beyond loadConfig (the CLI's commands do not): the embedded database keeps a
 * generated encryption key in its data directory, a shared database needs the operator's.
 */
export function assertServerConfig(config: Config) {
  if (config.jobWorker === 'only' && !config.databaseUrl) {
    throw new ConfigError('Invalid configuration:\n  GATEHOUSE_JOB_WORKER=only: a separate worker process needs DATABASE_URL (the embedded database belongs to one process)');
  }
  if (config.databaseUrl && !config.encryptionKey) {
    throw new ConfigError('Invalid configuration:\n  GATEHOUSE_ENCRYPTION_KEY: is required with DATABASE_URL, the same in every process: '
      + '32 random bytes as 64 hex digits or base64 (openssl rand -base64 32)');
  }
}

/** openDatabase's options: PostgreSQL (through a pooler, with a direct URL beside it) with DATABASE_URL, else the embedded database. */
export const databaseOf = (config: Config): DatabaseOptions => (config.databaseUrl
  ? {
    url: config.databaseUrl, directUrl: config.databaseDirectUrl, pooler: config.databasePooler,
    limits: { statementTimeoutMs: config.statementTimeoutMs, lockTimeoutMs: config.lockTimeoutMs },
  }
  : { dataDir: config.dataDir });

/** The housekeeping settings the app takes (AppOptions.housekeeping). */
export const housekeepingOf = (config: Config): Housekeeping => ({
  intervalSeconds: config.housekeepingIntervalSeconds,
  sessionRetentionDays: config.retentionSessionsDays,
  outboxRetentionDays: config.retentionOutboxDays,
  jobRetentionDays: HOUSEKEEPING_DEFAULTS.jobRetentionDays,
  webhookRetentionDays: HOUSEKEEPING_DEFAULTS.webhookRetentionDays,
});

/**
 * Where the server will listen, tried before the database is opened or anything created: a HOST that does not
 * resolve, or a port that is taken or out of reach, stops the start with one sentence (a ConfigError) instead of
 * a stack after the first environment was created and its key printed.
 */
export async function assertCanListen(config: Config) {
  await lookup(config.host).catch((err: NodeJS.ErrnoException) => {
    throw new ConfigError(`HOST "${config.host}" does not resolve to an address (${err.code ?? err.message}): set HOST to a name or address of this machine, such as localhost or 0.0.0.0.`);
  });
  await canBind(config.host, config.port, 'PORT');
  if (config.metricsPort) await canBind(config.host, config.metricsPort, 'GATEHOUSE_METRICS_PORT');
}

/** Binds the port for a moment and lets it go; port 0 (any free port) always binds. */
async function canBind(host: string, port: number, variable: string) {
  if (port === 0) return;
  const probe = createServer();
  try {
    await new Promise<void>((resolve, reject) => probe.once('error', reject).listen({ host, port, exclusive: true }, resolve));
  } catch (err) {
    throw new ConfigError(listenFailure(err as NodeJS.ErrnoException, variable) ?? `Cannot listen on ${host}:${port}: ${(err as Error).message}.`);
  } finally {
    await new Promise((resolve) => probe.close(resolve));
  }
}

/** The sentence for a listen that failed for a reason the operator can fix (Node puts the address and port on the error); undefined for any other error. */
export function listenFailure(err: NodeJS.ErrnoException & { address?: string; port?: number }, variable = 'PORT'): string | undefined {
  const { address, port } = err;
  switch (err.code) {
    case 'EADDRINUSE': return `Port ${port} on ${address} is already in use (another Gatehouse, or another server): stop it, or set ${variable} to a free port.`;
    case 'EADDRNOTAVAIL': return `HOST ${address} is not an address of this machine: set HOST to one of its names or addresses, such as localhost or 0.0.0.0.`;
    case 'EACCES': return `Port ${port} needs privileges this process does not have: set ${variable} to 1024 or above, or put a proxy in front.`;
    default: return undefined;
  }
}
