import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/given.js';
import { startServerPair, type PairEnv, type ServerPair } from '../helpers/server-pair.js';
import { receivedBy, startSmtpServer, type SmtpServer } from '../helpers/smtp.js';
import { eventually } from '../helpers/eventually.js';

const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;
const SIGN_UPS = 30;

describe.skipIf(!TEST_DATABASE_URL)('mail with several server processes on one PostgreSQL (needs TEST_DATABASE_URL)', () => {
  let smtp: SmtpServer;
  let pair: ServerPair;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    pair = await startServerPair(TEST_DATABASE_URL!, { GATEHOUSE_SMTP_URL: `smtp://127.0.0.1:${smtp.port}` });
  });
  afterAll(async () => {
    await pair?.stop();
    await smtp?.close();
  });

  const mailSent = async (server: ServerPair['a']) =>
    Number(/^gatehouse_mail_total\{outcome="sent"\} (\d+)$/m.exec((await pair.call(server, { path: '/metrics' })).body)?.[1] ?? 0);

  it('delivers each mail exactly once while every process\'s worker races for every message', async () => {
    const created = await pair.admin(pair.a, 'POST', '/environments', { name: `mail-${randomBytes(4).toString('hex')}` });
    const env: PairEnv = created.json();
    const addresses = Array.from({ length: SIGN_UPS }, (_, i) => `signup-${i}-${randomBytes(4).toString('hex')}@example.com`);

    const answers = await Promise.all(addresses.map((email, i) =>
      pair.client(pair.roundRobin(i), env, 'POST', '/auth/sign-up', { email, password: PASSWORD })));

    expect(answers.map((r) => r.status)).toEqual(Array(SIGN_UPS).fill(201));
    const db = new pg.Client({ connectionString: pair.databaseUrl });
    await db.connect();
    try {
      await eventually(async () => {
        const { rows } = await db.query(`select status, attempts from outbox_messages where environment_id = $1`, [env.id]);
        expect(rows).toEqual(Array(SIGN_UPS).fill({ status: 'sent', attempts: 1 }));
      }, { interval: 50 });
    } finally {
      await db.end();
    }
    for (const email of addresses) expect(receivedBy(smtp, email)).toHaveLength(1);
    expect(smtp.received).toHaveLength(SIGN_UPS);
    const sentBy = await Promise.all(pair.servers.map(mailSent));
    expect(sentBy.reduce((sum, n) => sum + n, 0)).toBe(SIGN_UPS);
  });
});
