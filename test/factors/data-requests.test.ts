import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { requested } from '../data-requests/support.js';
import { registerPasskey } from '../passkeys/support.js';
import { userWithTotp } from './support.js';

describe("a user's second factors and passkeys in data requests", () => {
  let t: TestApp;
  beforeAll(async () => { t = await startTestApp({ jobsInBackground: false }, { ownDatabase: true }); });
  afterAll(() => t.close());

  it('exports the factor, the backup codes left and the passkeys, never a secret, a code or a key', async () => {
    const env = await t.given.environment();
    const { session, factorId, secret, backupCodes } = await userWithTotp(t, env);
    const { passkey } = await registerPasskey(t, env, session.token, { name: 'Laptop' });
    const request = await requested(t, env, session, 'export');
    await t.app.runJobs();

    const res = await t.client(env, { token: session.token }).get(`/me/data-requests/${request.id}/download`);

    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().sections.secondFactors).toEqual([{
      id: factorId, type: 'totp', name: 'Authenticator app', createdAt: expect.any(String), confirmedAt: expect.any(String), lastUsedAt: expect.any(String), backupCodesRemaining: 10,
    }]);
    expect(res.json().sections.sessions[0].amr).toEqual(['pwd', 'otp', 'mfa']);
    expect(res.json().sections.passkeys).toEqual([expect.objectContaining({ id: passkey.id, name: 'Laptop' })]);
    expect(res.body).not.toContain(secret);
    for (const code of backupCodes) expect(res.body).not.toContain(code);
  });

  it('erases every factor, backup code and passkey of the user', async () => {
    const env = await t.given.environment({ dataErasureGraceDays: 0 });
    const { user, session } = await userWithTotp(t, env);
    await registerPasskey(t, env, session.token);
    await requested(t, env, session, 'erasure');
    await t.app.runJobs();

    const left = async (table: 'mfa_factors' | 'mfa_backup_codes' | 'passkeys') =>
      t.db.selectFrom(table).select('user_id').where('environment_id', '=', env.id).where('user_id', '=', user.id).execute();
    expect(await left('mfa_factors')).toEqual([]);
    expect(await left('mfa_backup_codes')).toEqual([]);
    expect(await left('passkeys')).toEqual([]);
    const [erased] = await t.db.selectFrom('audit_events').select('metadata').where('environment_id', '=', env.id).where('action', '=', 'user.erased').execute();
    expect(erased.metadata).toMatchObject({ removed: { secondFactors: 1, passkeys: 1 } });
  });
});
