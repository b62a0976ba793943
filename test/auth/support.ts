import type { LightMyRequestResponse } from 'fastify';
import type { TestApp, TestEnv } from '../helpers/app.js';

export const CODE_LIFETIME_MS = 10 * 60_000;
export const NEW_PASSWORD = 'a brand new passphrase';
export const ACCEPTED = { status: 'accepted', message: 'If an account has this email, a password reset code is on its way.' };
export const RESET_SUBJECT = /^Your password reset code is (\d{6})$/;

/** A 6-digit code that is certainly not the given one. */
export const otherCode = (code: string, step = 1) => String((Number(code) + step) % 1_000_000).padStart(6, '0');

/** Everything a client can see of an answer except the per-request instance id and the Date header. */
export function answer(res: LightMyRequestResponse) {
  const { date: _date, ...headers } = res.headers;
  const instance = String(res.headers['content-type']).includes('problem') ? res.json().instance : undefined;
  return { status: res.statusCode, headers, body: instance ? res.body.replace(instance, '') : res.body };
}

/** The password-reset calls of one test app; `app` is read at call time, since the app starts in beforeAll. */
export function passwordReset(app: () => TestApp) {
  const forgot = (env: TestEnv, email: unknown, ip?: string) =>
    app().client(env).post('/auth/forgot-password', { email }, ip ? { remoteAddress: ip } : {});
  const reset = (env: TestEnv, body: Record<string, unknown>, opts: { native?: boolean; ip?: string } = {}) =>
    app().client(env).post(`/auth/reset-password${opts.native ? '?_is_native=true' : ''}`, body, opts.ip ? { remoteAddress: opts.ip } : {});

  /** The code of the newest reset mail to this address. */
  async function latestResetCode(env: TestEnv, email: string): Promise<string> {
    const mail = (await app().outbox(env, email)).find((m) => RESET_SUBJECT.test(m.subject));
    if (!mail) throw new Error(`no reset mail to ${email}`);
    return RESET_SUBJECT.exec(mail.subject)![1];
  }

  /** Asks for a reset code and returns it. */
  async function requestCode(env: TestEnv, email: string): Promise<string> {
    const res = await forgot(env, email);
    if (res.statusCode !== 202) throw new Error(`forgot-password: ${res.statusCode} ${res.body}`);
    return latestResetCode(env, email);
  }

  const codeRow = (env: TestEnv, userId: string) =>
    app().db.selectFrom('verification_codes').selectAll()
      .where('environment_id', '=', env.id).where('user_id', '=', userId).where('purpose', '=', 'reset_password')
      .executeTakeFirstOrThrow();

  return { forgot, reset, requestCode, codeRow };
}
