import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('configuration from environment variables', () => {
  it('uses the documented defaults when nothing is set', () => {
    expect(loadConfig({})).toEqual({
      port: 3000, host: 'localhost', dataDir: './data', databaseUrl: undefined, adminToken: undefined, smtpUrl: undefined,
      mailFrom: 'Gatehouse <no-reply@gatehouse.localhost>', trustedProxies: [], logLevel: 'info',
    });
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

  it('names every bad variable and the value it got', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://db', GATEHOUSE_ADMIN_TOKEN: 'short', LOG_LEVEL: 'loud' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(/^Invalid configuration:/);
    for (const [name, value] of [['PORT', '"eighty"'], ['DATABASE_URL', '"mysql://db"'], ['GATEHOUSE_ADMIN_TOKEN', '"short"'], ['LOG_LEVEL', '"loud"']]) {
      expect(message).toContain(name);
      expect(message).toContain(`(got ${value})`);
    }
  });

  it('stops the server with exit code 2 and that message, before touching any database', async () => {
    const run = promisify(execFile);
    const failure = await run('node', ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, PORT: '99999' } })
      .then(() => undefined, (err: { code: number; stderr: string }) => err);
    expect(failure?.code).toBe(2);
    expect(failure?.stderr).toContain('Invalid configuration:');
    expect(failure?.stderr).toContain('PORT');
  });
});
