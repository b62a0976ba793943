import { uuidv7 } from 'uuidv7';
import { recordOwnEvent } from '../audit/service.js';
import type { Caller } from '../platform/caller.js';
import { clientNetwork } from '../platform/client-network.js';
import type { Clock } from '../platform/clock.js';
import { randomCode, sha256 } from '../platform/crypto/tokens.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import { rateLimited } from '../platform/http/problems.js';
import { environmentIn } from '../environments/service.js';
import { mailBrand } from '../environments/settings.js';
import { pickLocale } from '../platform/i18n/locale.js';
import type { Mailer } from '../platform/mail/mailer.js';
import { composeMail } from '../platform/mail/render.js';
import type { Limit, RateLimiter } from '../platform/rate-limit.js';
import { lockUserCredentials, mirrored, normalizeEmail, setPrimaryEmailCopy } from '../users/accounts.js';
import { userDeleted, userNotFound } from '../users/errors.js';
import type { User } from '../users/schemas.js';
import type { UsersService } from '../users/service.js';
import { emailAddressLimit, emailAddressNotFound, emailNotVerified, emailTaken, invalidCode, primaryEmail } from './errors.js';
import type { EmailAddress } from './schemas.js';
import { createEmailAddressesStore } from './store.js';

export interface EmailAddressesDeps {
  db: Db; clock: Clock; mailer: Mailer; limiter: RateLimiter;
  users: Pick<UsersService, 'get'>;
}

/** The primary included; enough for work, school and personal addresses with room to move between them. */
export const MAX_EMAIL_ADDRESSES = 10;
const CODE_LIFETIME_MS = 10 * 60_000;
// Each add mails a code to an address nobody has proven yet: one account or client must not turn us
// into a mail cannon.
const CODE_SENDS_PER_USER = { max: 10, windowSeconds: 3600 };
const CODE_SENDS_PER_IP = { max: 30, windowSeconds: 3600 };
// 5 tries per code and 10 codes an hour would allow 50 guesses an hour for ever: past this many wrong
// tries in a UTC day every address code of the user answers as wrong, as the sign-up codes do.
const CODE_FAILURES_PER_USER = { max: 10, windowSeconds: 86_400 };

const codeHash = (addressId: string, code: string) => sha256(`email_address:${addressId}:${code}`);

/** The signed-in user's email addresses (client plane), and a user's list for the Server API. */
export function createEmailAddressesService({ db, clock, mailer, limiter, users }: EmailAddressesDeps) {
  const addresses = createEmailAddressesStore(db);

  async function throttle(environmentId: string, bucket: string, limit: Limit) {
    const hit = await limiter.hit(environmentId, bucket, limit);
    if (!hit.allowed) throw rateLimited(hit.retryAfterSeconds);
  }

  /**
   * The user locked for the change (every change of a user's addresses takes this lock, so two of them
   * never interleave), with its primary address matching users.email: a user written by a process of the
   * version before 0019 (during a rolling deploy) gets its primary row here.
   */
  async function lockUser(trx: Db, environmentId: string, userId: string) {
    const found = await lockUserCredentials(trx, environmentId, userId);
    if (!found) throw userNotFound();
    if (found.user.status === 'deleted') throw userDeleted();
    return mirrored(trx, environmentId, found.user, clock.now());
  }

  const record = (trx: Db, environmentId: string, userId: string, action: string, addressId: string, by: Caller, metadata = {}) =>
    recordOwnEvent(trx, environmentId, {
      action, ...by, targets: [{ type: 'user', id: userId }, { type: 'email_address', id: addressId }], metadata,
    }, clock.now());

  /** The code goes to the new address in the user's language: the address is theirs to add. */
  async function mailCode(trx: Db, environmentId: string, user: User, email: string, code: string) {
    const env = await environmentIn(trx, environmentId);
    return mailer.send(environmentId, composeMail({
      to: email, kind: 'emailAddressCode', locale: pickLocale({ user: user.locale }), brand: mailBrand(env), code, values: { email },
    }), trx);
  }

  /** Counts a try against the user's daily budget before the code is checked, and gives it back when it was right. */
  async function withinCodeBudget<T>(environmentId: string, userId: string, tryCode: () => Promise<T | undefined>): Promise<T | undefined> {
    const bucket = `email_address_code_failures:user:${userId}`;
    const attempt = await limiter.hit(environmentId, bucket, CODE_FAILURES_PER_USER);
    if (!attempt.allowed) return undefined;
    const result = await tryCode();
    if (result !== undefined) await limiter.release(environmentId, bucket, attempt);
    return result;
  }

  return {
    /**
     * The user's addresses, the primary first. A user whose primary does not match its users row (written
     * by a process of the version before, during a rolling deploy) is put right first; only then is this a write.
     */
    async list(environmentId: string, userId: string): Promise<{ items: EmailAddress[] }> {
      const user = await users.get(environmentId, userId);
      const items = await addresses.list(environmentId, userId);
      const primary = items.find((a) => a.primary);
      const inSync = user.email === null || (primary?.email === user.email && primary.verified === (user.emailVerifiedAt !== null));
      if (inSync || user.status === 'deleted') return { items };
      await inTransaction(db, (trx) => lockUser(trx, environmentId, userId));
      return { items: await addresses.list(environmentId, userId) };
    },

    /** A new unverified address, with a 6-digit code mailed to it in the same transaction. */
    async add(environmentId: string, userId: string, rawEmail: string, by: Caller): Promise<EmailAddress> {
      const email = normalizeEmail(rawEmail);
      await throttle(environmentId, `email_address_send:ip:${clientNetwork(by.context.ipAddress ?? '')}`, CODE_SENDS_PER_IP);
      await throttle(environmentId, `email_address_send:user:${userId}`, CODE_SENDS_PER_USER);
      return inTransaction(db, async (trx) => {
        const user = await lockUser(trx, environmentId, userId);
        const store = createEmailAddressesStore(trx);
        if ((await store.count(environmentId, userId)) >= MAX_EMAIL_ADDRESSES) throw emailAddressLimit(MAX_EMAIL_ADDRESSES);
        if (await store.verifiedByAnother(environmentId, userId, email)) throw emailTaken();
        const [id, code, now] = [uuidv7(), randomCode(), clock.now()];
        const added = await store.insert(environmentId, { id, userId, email, codeHash: codeHash(id, code), codeExpiresAt: new Date(now.getTime() + CODE_LIFETIME_MS) }, now);
        if (added === 'taken') throw emailTaken();
        await mailCode(trx, environmentId, user, email, code);
        await record(trx, environmentId, userId, 'user.email_address_added', added.id, by);
        return added;
      });
    },

    /** The address verified by its code; 400 invalid_code for a wrong, expired or used-up one. Verifying a verified address changes nothing. */
    async verify(environmentId: string, userId: string, addressId: string, code: string, by: Caller): Promise<EmailAddress> {
      const address = await addresses.find(environmentId, userId, addressId);
      if (!address) throw emailAddressNotFound();
      if (address.verified) return address;
      const verified = await withinCodeBudget(environmentId, userId, () => inTransaction(db, async (trx) => {
        const result = await createEmailAddressesStore(trx).verifyWithCode(environmentId, userId, addressId, codeHash(addressId, code), clock.now());
        if (result === 'email_taken') throw emailTaken();
        if (result === 'wrong') return undefined; // the counted try commits
        await record(trx, environmentId, userId, 'user.email_address_verified', addressId, by);
        return result;
      }));
      if (!verified) throw invalidCode();
      return verified;
    },

    /** The verified address becomes primary, and users.email with it, in one transaction; making the primary primary changes nothing. */
    makePrimary: (environmentId: string, userId: string, addressId: string, by: Caller): Promise<EmailAddress> =>
      inTransaction(db, async (trx) => {
        await lockUser(trx, environmentId, userId);
        const store = createEmailAddressesStore(trx);
        const address = await store.find(environmentId, userId, addressId);
        if (!address) throw emailAddressNotFound();
        if (address.primary) return address;
        if (!address.verified) throw emailNotVerified();
        const previous = (await store.list(environmentId, userId)).find((a) => a.primary);
        const { address: primary, verifiedAt } = await store.makePrimary(environmentId, userId, addressId);
        const copied = await setPrimaryEmailCopy(trx, environmentId, userId, primary.email, verifiedAt, clock.now());
        if (copied === 'email_taken') throw emailTaken();
        await record(trx, environmentId, userId, 'user.primary_email_changed', addressId, by, { previousAddressId: previous?.id ?? null });
        return primary;
      }),

    /** Removes a secondary address; the primary never (409 primary_email). */
    remove: (environmentId: string, userId: string, addressId: string, by: Caller): Promise<void> =>
      inTransaction(db, async (trx) => {
        await lockUser(trx, environmentId, userId);
        const store = createEmailAddressesStore(trx);
        const address = await store.find(environmentId, userId, addressId);
        if (!address) throw emailAddressNotFound();
        if (address.primary) throw primaryEmail();
        await store.deleteSecondary(environmentId, userId, addressId);
        await record(trx, environmentId, userId, 'user.email_address_removed', addressId, by, { wasVerified: address.verified });
      }),
  };
}
export type EmailAddressesService = ReturnType<typeof createEmailAddressesService>;
