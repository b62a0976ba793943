import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSealer } from '../../src/platform/crypto/encryption.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

const ERROR = 50;

// A database whose secrets were sealed under another key than the server's (a backup restored with the wrong
// key, or an environment left out when a lost key's signing keys were rotated): the start-up check refuses the
// common case (backup-restore.test.ts); what remains must say in the log what is wrong, never fail obscurely.
describe('a secret sealed under another encryption key than the server has', () => {
  let t: TestApp;
  const lines: string[] = [];
  beforeAll(async () => { t = await startTestApp({ logLevel: 'info', logStream: { write: (line) => { lines.push(line); } } }); });
  afterAll(() => t.close());

  it('answers an opaque 500 to the client and logs that the encryption key does not open it, under the same instance', async () => {
    const env = await t.given.environment();
    const session = await t.given.session(env, await t.given.user(env));
    const foreign = createSealer(Buffer.alloc(32, 5));
    await t.db.updateTable('signing_keys').where('environment_id', '=', env.id)
      .set({ private_key_sealed: foreign.seal(Buffer.from('a private key sealed under another key')) }).execute();

    const res = await t.client(env, { token: session.token }).post('/sessions/current/token');
    expect(res.statusCode).toBe(500);
    expect(res.json()).toMatchObject({ status: 500, detail: 'An unexpected error occurred.', properties: { code: 'internal_error' } });
    const logged = lines.map((line) => JSON.parse(line)).filter((line) => `urn:uuid:${line.reqId}` === res.json().instance && line.level === ERROR);
    expect(logged).toEqual([expect.objectContaining({
      msg: 'unhandled error',
      err: expect.objectContaining({
        message: expect.stringMatching(/^A secret sealed in the database does not open with this encryption key \(GATEHOUSE_ENCRYPTION_KEY/),
        stack: expect.stringMatching(/^SealedSecretUnreadableError: /),
      }),
    })]);
  });
});
