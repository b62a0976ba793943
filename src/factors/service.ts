import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';
import { uuidv7 } from 'uuidv7';
import { recordOwnEvent } from '../audit/service.js';
import type { EnvironmentContext } from '../environments/service.js';
import type { Caller } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import type { Sealer } from '../platform/crypto/encryption.js';
import { sha256 } from '../platform/crypto/tokens.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import { endEnrolmentOnly, markSessionSecondFactor, revokeAllSessions } from '../sessions/service.js';
import type { UsersService } from '../users/service.js';
import { factorNotFound, invalidTotpCode, mfaDisabled, noSecondFactor, requiredByPolicy, totpAlreadyEnrolled } from './errors.js';
import type { MfaOverview } from './schemas.js';
import { createFactorsStore, toFactor } from './store.js';

/** RFC 6238 as every authenticator app reads it: SHA-1, 6 digits, 30-second steps. */
const PERIOD_SECONDS = 30;
/** One step either side of now, for a phone clock a little off. */
const SKEW_STEPS = 1;
const BACKUP_CODES = 10;
// Lower-case letters and digits without look-alikes (no 0/o, 1/l/i): 10 characters carry 50 bits.
const BACKUP_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const DEFAULT_NAME = 'Authenticator app';

/** What a second-factor code turned out to be. */
export type SecondFactorKind = 'totp' | 'backup_code';

const totpOf = (secret: Buffer, issuer = 'Gatehouse', label = 'account') =>
  new TOTP({ issuer, label, algorithm: 'SHA1', digits: 6, period: PERIOD_SECONDS, secret: new Secret({ buffer: new Uint8Array(secret).buffer }) });

/** The time step a code of `at` belongs to, after the skew the validator found. */
const stepOf = (at: Date, delta: number) => Math.floor(at.getTime() / 1000 / PERIOD_SECONDS) + delta;

function newBackupCode(): string {
  const bytes = randomBytes(10);
  const chars = [...bytes].map((b) => BACKUP_ALPHABET[b % BACKUP_ALPHABET.length]).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

/** Backup codes are typed by hand: case, spaces and the dash do not matter. */
const normalizeBackupCode = (code: string) => code.toLowerCase().replace(/[\s-]/g, '');
const backupCodeHash = (userId: string, code: string) => sha256(`${userId}:${normalizeBackupCode(code)}`);

/**
 * Checks a second-factor code of a user with a confirmed factor: a TOTP code (6 digits) once per time
 * step, or an unused backup code, used up. Undefined when it is neither. Plain, so the sign-in's second
 * step and a re-authentication use the very same rules.
 */
export async function checkSecondFactor(db: Db, sealer: Sealer, environmentId: string, userId: string, code: string, now: Date): Promise<SecondFactorKind | undefined> {
  const store = createFactorsStore(db);
  if (/^\d{6}$/.test(code)) {
    for (const factor of await store.listConfirmed(environmentId, userId)) {
      const delta = totpOf(sealer.open(factor.secret_sealed)).validate({ token: code, timestamp: now.getTime(), window: SKEW_STEPS });
      if (delta !== null && await store.acceptStep(environmentId, factor.id, stepOf(now, delta), now)) return 'totp';
    }
    return undefined;
  }
  if (normalizeBackupCode(code).length !== 10) return undefined;
  return (await store.consumeBackupCode(environmentId, userId, backupCodeHash(userId, code), now)) ? 'backup_code' : undefined;
}

/** What a user with a confirmed factor can answer a challenge with. */
export const SECOND_FACTOR_KINDS: SecondFactorKind[] = ['totp', 'backup_code'];

/** An erasure: every factor and backup code of the user, in the caller's transaction; answers how many confirmed factors went. */
export const deleteSecondFactors = (trx: Db, environmentId: string, userId: string) => createFactorsStore(trx).deleteAll(environmentId, userId);

/** Whether the user has a confirmed second factor, in the caller's transaction. */
export const hasSecondFactor = (db: Db, environmentId: string, userId: string) => createFactorsStore(db).hasConfirmedTotp(environmentId, userId);

export interface FactorsDeps {
  db: Db; clock: Clock; sealer: Sealer;
  users: Pick<UsersService, 'get'>;
}

/** The signed-in user enrolling and managing second factors, and the Server API's view and reset. */
export function createFactorsService({ db, clock, sealer, users }: FactorsDeps) {
  const store = createFactorsStore(db);

  async function overview(environmentId: string, userId: string): Promise<MfaOverview> {
    const [factors, backupCodesRemaining] = await Promise.all([store.listConfirmed(environmentId, userId), store.remainingBackupCodes(environmentId, userId)]);
    return { factors: factors.map(toFactor), backupCodesRemaining: factors.length === 0 ? 0 : backupCodesRemaining };
  }

  /** Ten new backup codes replace the old ones, in the caller's transaction; the plain codes go back to the user once. */
  async function replaceBackupCodes(trx: Db, environmentId: string, userId: string, now: Date) {
    const codes = Array.from({ length: BACKUP_CODES }, newBackupCode);
    await createFactorsStore(trx).replaceBackupCodes(environmentId, userId, codes.map((code) => backupCodeHash(userId, code)), now);
    return codes;
  }

  const record = (trx: Db, environmentId: string, userId: string, action: string, by: Caller, metadata: Record<string, string | number> = {}) =>
    recordOwnEvent(trx, environmentId, { action, ...by, targets: [{ type: 'user', id: userId }], metadata }, clock.now());

  const enabled = (env: EnvironmentContext) => { if (env.settings.mfa.policy === 'off') throw mfaDisabled(); };

  return {
    overview,

    /** A pending TOTP factor: its secret sealed at rest, and shown this once as text, URI and QR code. */
    async enrolTotp(env: EnvironmentContext & { name: string }, userId: string) {
      enabled(env);
      if (await store.hasConfirmedTotp(env.id, userId)) throw totpAlreadyEnrolled();
      const user = await users.get(env.id, userId);
      const secret = randomBytes(20);
      const factorId = uuidv7();
      await store.insertPending(env.id, { id: factorId, userId, name: DEFAULT_NAME, secretSealed: sealer.seal(secret) }, clock.now());
      // The app lists the account as "<environment>: <email>", so a user with several environments tells them apart.
      const totp = totpOf(secret, env.name, user.email ?? user.id);
      const otpauthUri = totp.toString();
      // qrcode loads here, at an enrolment, rather than at every start.
      return { factorId, secret: totp.secret.base32, otpauthUri, qrCodeSvg: await (await import('qrcode')).default.toString(otpauthUri, { type: 'svg', margin: 1 }) };
    },

    /**
     * The first code confirms the factor (once per step, like every code after it). In one transaction:
     * the factor confirmed, ten backup codes, this session counted as a second-factor check, every session
     * of the user freed from enrolment, and `user.mfa_factor_added` recorded.
     */
    async confirmTotp(env: EnvironmentContext, userId: string, sessionId: string, factorId: string, code: string, by: Caller) {
      enabled(env);
      const pending = await store.findPending(env.id, userId, factorId);
      if (!pending) throw factorNotFound();
      const now = clock.now();
      const delta = totpOf(sealer.open(pending.secret_sealed)).validate({ token: code, timestamp: now.getTime(), window: SKEW_STEPS });
      if (delta === null) throw invalidTotpCode();
      return inTransaction(db, async (trx) => {
        if (!(await createFactorsStore(trx).acceptStep(env.id, factorId, stepOf(now, delta), now, true))) throw factorNotFound();
        const backupCodes = await replaceBackupCodes(trx, env.id, userId, now);
        await markSessionSecondFactor(trx, env.id, sessionId, now);
        await endEnrolmentOnly(trx, env.id, userId);
        await record(trx, env.id, userId, 'user.mfa_factor_added', by, { type: 'totp', factorId });
        return { backupCodes };
      }).catch((err: unknown) => {
        // Another confirmation of a second pending factor won the one-TOTP-per-user index.
        if ((err as { code?: string }).code === '23505') throw totpAlreadyEnrolled();
        throw err;
      });
    },

    /** Ten new backup codes; the old ones, used or not, stop working. */
    async regenerateBackupCodes(env: EnvironmentContext, userId: string, by: Caller) {
      if (!(await store.hasConfirmedTotp(env.id, userId))) throw noSecondFactor();
      return inTransaction(db, async (trx) => {
        const backupCodes = await replaceBackupCodes(trx, env.id, userId, clock.now());
        await record(trx, env.id, userId, 'user.backup_codes_regenerated', by);
        return { backupCodes };
      });
    },

    /** Removes a factor (a pending one too); the backup codes go with the last confirmed one. */
    async remove(env: EnvironmentContext, userId: string, factorId: string, by: Caller) {
      await inTransaction(db, async (trx) => {
        const factors = createFactorsStore(trx);
        const removed = await factors.deleteFactor(env.id, userId, factorId);
        if (!removed) throw factorNotFound();
        if (!removed.confirmed_at) return;
        const left = await factors.listConfirmed(env.id, userId);
        if (left.length === 0 && env.settings.mfa.policy === 'required') throw requiredByPolicy();
        if (left.length === 0) await factors.deleteBackupCodes(env.id, userId);
        await record(trx, env.id, userId, 'user.mfa_factor_removed', by, { type: 'totp', factorId });
      });
    },

    /** Server API: the user's factors (404 for a user not in the environment). */
    async overviewOf(environmentId: string, userId: string) {
      await users.get(environmentId, userId);
      return overview(environmentId, userId);
    },

    /** Server API, "lost my phone": every factor and backup code removed and every session revoked, in one transaction. */
    async reset(environmentId: string, userId: string, by: Caller) {
      await users.get(environmentId, userId);
      await inTransaction(db, async (trx) => {
        const removedFactors = await createFactorsStore(trx).deleteAll(environmentId, userId);
        const revokedSessions = await revokeAllSessions(trx, environmentId, userId, clock.now());
        await record(trx, environmentId, userId, 'user.mfa_reset', by, { removedFactors, revokedSessions });
      });
    },
  };
}
export type FactorsService = ReturnType<typeof createFactorsService>;
