import { sql, type RawBuilder, type Selectable } from 'kysely';
import { deleteInBatches } from '../platform/db/batches.js';
import { runChain, type Cte, type CteChain } from '../platform/db/cte.js';
import { jsonb, preparedAs, type Db } from '../platform/db/database.js';
import type { JsonObject } from '../platform/json.js';
import type { SessionRow, UserLock } from '../platform/db/tables.js';

export type CodePurpose = 'verify_email' | 'reset_password';
export const MAX_CODE_ATTEMPTS = 5;

/** One-time codes sent by mail: one live code per user and purpose, stored hashed. */
export function createCodesStore(db: Db) {
  return {
    /** Replaces any earlier code: only the latest request's code works. */
    replace: (environmentId: string, userId: string, purpose: CodePurpose, codeHash: Buffer, expiresAt: Date, now: Date) =>
      db.insertInto('verification_codes').values({
        environment_id: environmentId, user_id: userId, purpose, code_hash: codeHash, attempts: 0, created_at: now, expires_at: expiresAt, used_at: null,
      }).onConflict((oc) => oc.columns(['environment_id', 'user_id', 'purpose']).doUpdateSet({
        code_hash: codeHash, attempts: 0, created_at: now, expires_at: expiresAt, used_at: null,
      })).execute(),
    /** Deletes codes that expired before the cut-off (used or not): they can never work again. */
    deleteExpired: (before: Date) => deleteInBatches(db, 'verification_codes', sql<boolean>`expires_at < ${before}::timestamptz`),
    /**
     * One statement decides: a matching live code is used up (so it works once, even concurrently);
     * a wrong one counts an attempt, and the fifth wrong attempt burns the code.
     */
    consume: (environmentId: string, userId: string, purpose: CodePurpose, codeHash: Buffer, now: Date) =>
      sql<{ ok: boolean }>`
        update verification_codes set
          used_at = case when code_hash = ${codeHash} then ${now}::timestamptz end,
          attempts = attempts + case when code_hash = ${codeHash} then 0 else 1 end
        where environment_id = ${environmentId} and user_id = ${userId} and purpose = ${purpose}
          and used_at is null and expires_at > ${now} and attempts < ${MAX_CODE_ATTEMPTS}
        returning used_at is not null as ok`.execute(db).then((r) => r.rows[0]?.ok === true),
  };
}

/** The pieces of a sign-in's last statement, each from the domain that owns its table. */
export interface SignedInSession {
  /** Adds the CTEs that lock the user (and the writes that commit with the session). */
  lockUser: (chain: CteChain) => Cte<UserLock>;
  /** Inserts the session while the locked user is active. */
  session: (user: Cte<UserLock>) => RawBuilder<Selectable<SessionRow>>;
  /** Records the sign-in once per row of `session`. */
  event: (chain: CteChain, session: Cte<Selectable<SessionRow>>) => void;
}

/**
 * Starts a session in ONE statement (one round trip; PostgreSQL runs every data-modifying CTE, read or
 * not): the user locked, the session inserted, the sign-in recorded. The session's row, or undefined when
 * the user was banned or deleted since the flow checked them (then only the lock's own writes happen).
 * `name` prepares the statement; one name per kind of lock, as the text must not vary.
 */
export async function insertSignedInSession(db: Db, name: string, pieces: SignedInSession) {
  const rows = await runChain(db, preparedAs(name), (chain) => {
    const session = chain.add('session', pieces.session(pieces.lockUser(chain)));
    pieces.event(chain, session);
    return session;
  });
  return rows[0];
}

/** Wrong codes a challenge takes before it is spent; the account's lockout counts each of them too. */
export const MAX_CHALLENGE_ATTEMPTS = 5;

export interface NewChallenge { tokenHash: Buffer; userId: string; method: string; details: JsonObject; expiresAt: Date }

const liveChallenge = (environmentId: string, tokenHash: Buffer, now: Date) =>
  sql<boolean>`environment_id = ${environmentId}::uuid and token_hash = ${tokenHash} and used_at is null
    and expires_at > ${now}::timestamptz and attempts < ${MAX_CHALLENGE_ATTEMPTS}`;

/** A new challenge, as a CTE body: a caller commits its own write with it (a password sign-in gives the client's attempt back). */
export const insertChallengeStatement = (environmentId: string, challenge: NewChallenge, now: Date) => sql<{ token_hash: Buffer }>`
  insert into mfa_challenges (environment_id, token_hash, user_id, method, details, created_at, expires_at)
  values (${environmentId}::uuid, ${challenge.tokenHash}, ${challenge.userId}::uuid, ${challenge.method}, ${jsonb(challenge.details)}::jsonb,
          ${now}::timestamptz, ${challenge.expiresAt}::timestamptz)
  returning token_hash`;

/**
 * The challenge used up, as a CTE body of the statement that starts its session, only once `user` (the
 * locked user) is active: one statement, so of two answers at once exactly one finds it live.
 */
export const consumeChallengeAfter = (environmentId: string, tokenHash: Buffer, now: Date, user: Cte<UserLock>) => sql<{ token_hash: Buffer }>`
  update mfa_challenges set used_at = ${now}::timestamptz
  where ${liveChallenge(environmentId, tokenHash, now)} and exists (select from ${user.from} u where u.status = 'active')
  returning token_hash`;

/** The second step of a sign-in: a single-use challenge, stored hashed, bound to its environment and user. */
export function createChallengesStore(db: Db) {
  const live = liveChallenge;
  return {
    findLive: (environmentId: string, tokenHash: Buffer, now: Date) =>
      db.selectFrom('mfa_challenges').selectAll().where(live(environmentId, tokenHash, now)).executeTakeFirst(),
    countFailure: (environmentId: string, tokenHash: Buffer) =>
      db.updateTable('mfa_challenges').set((eb) => ({ attempts: eb('attempts', '+', 1) }))
        .where('environment_id', '=', environmentId).where('token_hash', '=', tokenHash).execute(),
    deleteExpired: (before: Date) => deleteInBatches(db, 'mfa_challenges', sql<boolean>`expires_at < ${before}::timestamptz`),
  };
}
