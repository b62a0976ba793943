import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { DEFAULT_MAIL_FROM } from './platform/mail/mailer.js';

const ConfigSchema = Type.Object({
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  host: Type.String({ minLength: 1 }),
  dataDir: Type.String({ minLength: 1 }),
  databaseUrl: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  adminToken: Type.Optional(Type.String({ minLength: 16 })),
  smtpUrl: Type.Optional(Type.String({ pattern: '^smtps?://' })),
  mailFrom: Type.String({ minLength: 3 }),
  trustedProxies: Type.Array(Type.String()),
  logLevel: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l))),
});
export type Config = Static<typeof ConfigSchema>;

export class ConfigError extends Error {}

/** Every environment variable the service reads, parsed and validated in one place. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Readonly<Config> {
  const raw = {
    port: env.PORT === undefined ? 3000 : Number(env.PORT),
    host: env.HOST ?? 'localhost',
    dataDir: env.GATEHOUSE_DATA_DIR ?? './data',
    databaseUrl: env.DATABASE_URL || undefined,
    adminToken: env.GATEHOUSE_ADMIN_TOKEN || undefined,
    smtpUrl: env.GATEHOUSE_SMTP_URL || undefined,
    mailFrom: env.GATEHOUSE_MAIL_FROM ?? DEFAULT_MAIL_FROM,
    trustedProxies: (env.GATEHOUSE_TRUSTED_PROXIES ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    logLevel: env.LOG_LEVEL ?? 'info',
  };
  const names: Record<string, string> = {
    port: 'PORT', host: 'HOST', dataDir: 'GATEHOUSE_DATA_DIR', databaseUrl: 'DATABASE_URL',
    adminToken: 'GATEHOUSE_ADMIN_TOKEN', smtpUrl: 'GATEHOUSE_SMTP_URL', mailFrom: 'GATEHOUSE_MAIL_FROM',
    trustedProxies: 'GATEHOUSE_TRUSTED_PROXIES', logLevel: 'LOG_LEVEL',
  };
  const errors = [...Value.Errors(ConfigSchema, raw)];
  if (errors.length > 0) {
    const lines = errors.map((e) => {
      const key = e.instancePath.split('/')[1] ?? '';
      const name = names[key] ?? key;
      // Show what the operator typed, not what parsing made of it (PORT=eighty, not NaN).
      return `  ${name}: ${e.message} (got ${JSON.stringify(env[name] ?? (raw as Record<string, unknown>)[key])})`;
    });
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return Object.freeze(raw as Config);
}
