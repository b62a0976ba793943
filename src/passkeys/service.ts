import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { uuidv7 } from 'uuidv7';
import { recordOwnEvent } from '../audit/service.js';
import type { EnvironmentContext } from '../environments/service.js';
import { hasSecondFactor } from '../factors/service.js';
import type { Caller } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { sha256 } from '../platform/crypto/tokens.js';
import { inTransaction, type Db } from '../platform/db/database.js';
import { escapeHatchOrigins } from '../platform/http/planes.js';
import { endEnrolmentOnly } from '../sessions/service.js';
import type { UsersService } from '../users/service.js';
import { invalidPasskey, invalidPasskeyChallenge, passkeyAlreadyRegistered, passkeyNotFound, passkeysDisabled, requiredByPolicy } from './errors.js';
import type { CreationOptions, Passkey, RegisterPasskeyBody, RequestOptions } from './schemas.js';
import { signInChallenges } from './sign-in-challenges.js';
import { createPasskeyChallengesStore, createPasskeysStore, toPasskey, type ChallengePurpose } from './store.js';

/** The environment a ceremony runs in: its settings, and the hosts the RP ID and origins come from. */
export type PasskeyEnvironment = EnvironmentContext & { name: string; frontendHost: string; allowedOrigins: string[] };

/** Long enough to find a security key or unlock a phone; the browser's own timeout is the same. */
const CEREMONY_MS = 5 * 60_000;
/** ES256 (every platform authenticator) and RS256 (Windows Hello); EdDSA stays out until every verifier here has it. */
const ALGORITHMS = [-7, -257];
const DEFAULT_NAME = 'Passkey';

/**
 * The WebAuthn library, loaded at the first ceremony: it and its ASN.1 and X.509 packages are 350 files,
 * a tenth of a second of every start, that a service whose users have no passkeys never needs.
 */
let webauthnLibrary: Promise<typeof import('@simplewebauthn/server')> | undefined;
const webauthn = () => (webauthnLibrary ??= import('@simplewebauthn/server'));

const urlOf = (origin: string) => { try { return new URL(origin); } catch { return undefined; } };
const hostnameOf = (origin: string) => urlOf(origin)?.hostname ?? '';

/** Loopback host names, which browsers count as secure contexts over http: localhost and its subdomains, 127.0.0.0/8, [::1]. */
const LOOPBACK_HOST = /^(?:(?:.+\.)?localhost|127(?:\.\d{1,3}){3}|\[::1\])$/;

/**
 * Whether a browser would run a WebAuthn ceremony on a page of this origin: only in a secure context,
 * so https, or http on a loopback host (a developer's machine). An http origin of any other host is a
 * page anyone on the network path can rewrite, and no browser offers a passkey there.
 */
function isSecureContext(origin: string): boolean {
  const url = urlOf(origin);
  return url?.protocol === 'https:' || (url?.protocol === 'http:' && LOOPBACK_HOST.test(url.hostname));
}

/**
 * The relying party of an environment. The RP ID is the setting passkeys.rpId (a parent domain of the
 * frontend host, checked when set) or else the frontend host's name without its port: browsers scope a
 * credential to a domain, never a port. A ceremony counts from the frontend host's own origin (https, or
 * http too on a loopback host) and from the allowed origins inside the RP ID's domain (an app on
 * app.example.com when the RP ID is example.com; a dev server on localhost:5173 when it is localhost)
 * that are secure contexts; a browser runs it nowhere else.
 */
export function relyingPartyOf(env: Pick<PasskeyEnvironment, 'frontendHost' | 'allowedOrigins' | 'settings'>) {
  const rpId = env.settings.passkeys.rpId ?? env.frontendHost.replace(/:\d+$/, '');
  const inDomain = env.allowedOrigins.filter((origin) => { const host = hostnameOf(origin); return host === rpId || host.endsWith(`.${rpId}`); });
  return { rpId, origins: [...new Set([...escapeHatchOrigins(env.frontendHost), ...inDomain])].filter(isSecureContext) };
}

/** The WebAuthn user handle of a user: the 16 bytes of its uuid (never the email, which the authenticator would keep). */
const userHandleOf = (userId: string) => Buffer.from(userId.replace(/-/g, ''), 'hex');

/** The challenge a response claims to answer, read from its clientDataJSON; the library checks the rest. */
function challengeIn(clientDataJSON: string): string {
  try {
    const challenge: unknown = JSON.parse(Buffer.from(clientDataJSON, 'base64url').toString('utf8')).challenge;
    if (typeof challenge === 'string' && challenge.length > 0) return challenge;
  } catch { /* answered below */ }
  throw invalidPasskey();
}

const enabled = (env: EnvironmentContext) => { if (!env.settings.passkeys.enabled) throw passkeysDisabled(); };

/** What a verified assertion proves: whose passkey, and what the session's amr says of it; `spends` the sealed challenge it answered. */
export interface VerifiedAssertion { userId: string; passkeyId: string; counter: number; backedUp: boolean; amr: string[]; spends?: SpentChallenge }

/** A sealed sign-in challenge an assertion answered, to be marked used with the sign-in. */
interface SpentChallenge { challengeHash: Buffer; expiresAt: Date }

/**
 * RFC 8176 for a passkey: `swk` for a synced (backup-eligible) key, whose private half lives in software
 * across devices, `hwk` for one bound to its authenticator; `user` as presence is always tested; `mfa` as
 * user verification (PIN or biometric) is required, so the key and the unlock are two factors.
 */
const amrOf = (deviceType: 'singleDevice' | 'multiDevice') => [deviceType === 'multiDevice' ? 'swk' : 'hwk', 'user', 'mfa'];

/**
 * Records a verified use in the caller's transaction: the sealed challenge marked used (of two sign-ins
 * with one challenge, one inserts the mark), and the counter, which must move forward (a cloned key, a race).
 */
export async function recordPasskeyUse(trx: Db, environmentId: string, verified: VerifiedAssertion, now: Date) {
  if (verified.spends && !(await createPasskeyChallengesStore(trx).insertUsed(environmentId, verified.spends.challengeHash, verified.spends.expiresAt, now))) {
    throw invalidPasskeyChallenge();
  }
  const used = await createPasskeysStore(trx).recordUse(environmentId, verified.passkeyId, verified.counter, verified.backedUp, now);
  if (!used) throw invalidPasskey();
}

/** An erasure: every passkey of the user, in the caller's transaction; answers how many went. */
export const deletePasskeys = (trx: Db, environmentId: string, userId: string) => createPasskeysStore(trx).deleteAllOf(environmentId, userId);

export interface PasskeysDeps {
  db: Db; clock: Clock;
  /** GATEHOUSE_ENCRYPTION_KEY: sign-in challenges are signed with a key derived from it. */
  encryptionKey: Buffer;
  users: Pick<UsersService, 'get' | 'findCredentials'>;
}

/** The signed-in user's passkeys (register, list, rename, remove), and the ceremony checks the sign-in wing uses. */
export function createPasskeysService({ db, clock, encryptionKey, users }: PasskeysDeps) {
  const store = createPasskeysStore(db);
  const challenges = createPasskeyChallengesStore(db);
  const signed = signInChallenges(encryptionKey);

  const record = (trx: Db, environmentId: string, userId: string, action: string, by: Caller, metadata: Record<string, string>) =>
    recordOwnEvent(trx, environmentId, { action, ...by, targets: [{ type: 'user', id: userId }], metadata }, clock.now());

  async function issueChallenge(environmentId: string, challenge: string, purpose: ChallengePurpose, userId: string | null, restricted: boolean) {
    const now = clock.now();
    await challenges.insert(environmentId, { challengeHash: sha256(challenge), purpose, userId, restricted, expiresAt: new Date(now.getTime() + CEREMONY_MS) }, now);
  }

  /** Uses up the challenge the response answers; 400 invalid_passkey_challenge when it is not a live one of this environment and purpose. */
  async function consumeChallenge(environmentId: string, clientDataJSON: string, purpose: ChallengePurpose) {
    const challenge = challengeIn(clientDataJSON);
    const used = await challenges.consume(environmentId, sha256(challenge), purpose, clock.now());
    if (!used) throw invalidPasskeyChallenge();
    return { challenge, ...used };
  }

  /**
   * The sign-in challenge a response answers: a signed one, not expired and, unless bound to an account
   * (checked once the passkey names it), this environment's; spent later, with the sign-in. Else one the
   * version before stored, spent here (a ceremony begun during an upgrade).
   */
  async function signInChallengeOf(environmentId: string, clientDataJSON: string) {
    const challenge = challengeIn(clientDataJSON);
    const found = signed.read(challenge);
    if (!found) {
      const stored = await consumeChallenge(environmentId, clientDataJSON, 'authentication');
      return { challenge, answeredBy: (userId: string) => !stored.restricted || stored.user_id === userId, spends: undefined };
    }
    if (!(found.expiresAt.getTime() > clock.now().getTime()) || (!found.restricted && !found.signedFor(environmentId, null))) throw invalidPasskeyChallenge();
    return {
      challenge, answeredBy: (userId: string) => !found.restricted || found.signedFor(environmentId, userId),
      spends: { challengeHash: sha256(challenge), expiresAt: found.expiresAt },
    };
  }

  async function verifyRegistration(env: PasskeyEnvironment, response: RegisterPasskeyBody['response'], challenge: string) {
    const { rpId, origins } = relyingPartyOf(env);
    const result = await (await webauthn()).verifyRegistrationResponse({
      response: response as RegistrationResponseJSON, expectedChallenge: challenge, expectedOrigin: origins, expectedRPID: rpId,
      requireUserVerification: true, supportedAlgorithmIDs: ALGORITHMS,
    }).catch(() => undefined);
    if (!result?.verified) throw invalidPasskey();
    return result.registrationInfo;
  }

  return {
    /** Options for navigator.credentials.create(): a discoverable credential with user verification, none of the user's keys again. */
    async registrationOptions(env: PasskeyEnvironment, userId: string) {
      enabled(env);
      const [user, existing] = await Promise.all([users.get(env.id, userId), store.listForUser(env.id, userId)]);
      const options = await (await webauthn()).generateRegistrationOptions({
        rpName: env.name, rpID: relyingPartyOf(env).rpId, userID: userHandleOf(userId),
        userName: user.email ?? userId, userDisplayName: user.name ?? user.email ?? '',
        timeout: CEREMONY_MS, attestationType: 'none', supportedAlgorithmIDs: ALGORITHMS,
        authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
        excludeCredentials: existing.map((row) => ({ id: row.credential_id, transports: row.transports })),
      });
      await issueChallenge(env.id, options.challenge, 'registration', userId, false);
      // The library's JSON types are looser than what it produces (optional timeout, string types).
      return options as CreationOptions;
    },

    /**
     * Verifies the authenticator's attestation ('none': the key is trusted as the user's, not as a make)
     * against a live registration challenge of this user. In one transaction: the passkey stored, every
     * session of the user freed from enrolment (a passkey satisfies mfa.policy "required"), and the trail.
     */
    async register(env: PasskeyEnvironment, userId: string, body: RegisterPasskeyBody, by: Caller): Promise<Passkey> {
      enabled(env);
      const used = await consumeChallenge(env.id, body.response.response.clientDataJSON, 'registration');
      if (used.user_id !== userId) throw invalidPasskeyChallenge();
      const info = await verifyRegistration(env, body.response, used.challenge);
      return inTransaction(db, async (trx) => {
        const row = await createPasskeysStore(trx).insert(env.id, {
          id: uuidv7(), userId, credentialId: info.credential.id, publicKey: Buffer.from(info.credential.publicKey), counter: info.credential.counter,
          transports: info.credential.transports ?? [], deviceType: info.credentialDeviceType, backedUp: info.credentialBackedUp,
          aaguid: info.aaguid, rpId: relyingPartyOf(env).rpId, name: body.name ?? DEFAULT_NAME,
        }, clock.now());
        if (!row) throw passkeyAlreadyRegistered();
        await endEnrolmentOnly(trx, env.id, userId);
        await record(trx, env.id, userId, 'user.passkey_added', by, { passkeyId: row.id, deviceType: row.device_type });
        return toPasskey(row);
      });
    },

    list: async (environmentId: string, userId: string) => ({ items: (await store.listForUser(environmentId, userId)).map(toPasskey) }),

    /** Server API: the user's passkeys (404 for a user not in the environment). */
    async listOf(environmentId: string, userId: string) {
      await users.get(environmentId, userId);
      return { items: (await store.listForUser(environmentId, userId)).map(toPasskey) };
    },

    async rename(environmentId: string, userId: string, passkeyId: string, name: string) {
      const row = await store.rename(environmentId, userId, passkeyId, name);
      if (!row) throw passkeyNotFound();
      return toPasskey(row);
    },

    /** Removes a passkey; under mfa.policy "required" not the user's last way past enrolment (no TOTP, no other passkey). */
    async remove(env: EnvironmentContext, userId: string, passkeyId: string, by: Caller) {
      await inTransaction(db, async (trx) => {
        const passkeys = createPasskeysStore(trx);
        if (!(await passkeys.delete(env.id, userId, passkeyId))) throw passkeyNotFound();
        if (env.settings.mfa.policy === 'required' && (await passkeys.countForUser(env.id, userId)) === 0
          && !(await hasSecondFactor(trx, env.id, userId))) throw requiredByPolicy();
        await record(trx, env.id, userId, 'user.passkey_removed', by, { passkeyId });
      });
    },

    /**
     * Options for navigator.credentials.get(). Always discoverable (no allowCredentials), whatever the
     * email, so the answer never tells whether an email has an account or passkeys. An email, when given,
     * binds the challenge: only that account's passkey may answer it (none may, when no account has it).
     */
    async authenticationOptions(env: PasskeyEnvironment, email: string | undefined) {
      enabled(env);
      const userId = email === undefined ? null : (await users.findCredentials(env.id, email))?.user.id ?? null;
      const challenge = signed.issue(env.id, userId, email !== undefined, new Date(clock.now().getTime() + CEREMONY_MS));
      const options = await (await webauthn()).generateAuthenticationOptions({ rpID: relyingPartyOf(env).rpId, userVerification: 'required', timeout: CEREMONY_MS, challenge });
      return options as RequestOptions;
    },

    /**
     * Verifies an assertion against a live sign-in challenge of this environment: the credential known in
     * this environment, the user handle its user's, signature, origin, RP ID, user presence and verification,
     * and a counter that moved forward. The caller records the use with the session, which spends the challenge.
     */
    async verifyAssertion(env: PasskeyEnvironment, response: AuthenticationResponseJSON): Promise<VerifiedAssertion> {
      enabled(env);
      const used = await signInChallengeOf(env.id, response.response.clientDataJSON);
      const passkey = await store.findByCredentialId(env.id, response.id);
      if (!passkey || !used.answeredBy(passkey.user_id)) throw invalidPasskey();
      const handle = response.response.userHandle;
      if (handle !== undefined && handle !== userHandleOf(passkey.user_id).toString('base64url')) throw invalidPasskey();
      const { rpId, origins } = relyingPartyOf(env);
      const result = await (await webauthn()).verifyAuthenticationResponse({
        response, expectedChallenge: used.challenge, expectedOrigin: origins, expectedRPID: rpId, requireUserVerification: true,
        credential: { id: passkey.credential_id, publicKey: new Uint8Array(passkey.public_key), counter: passkey.counter, transports: passkey.transports as never },
      }).catch(() => undefined);
      if (!result?.verified) throw invalidPasskey();
      const info = result.authenticationInfo;
      return { userId: passkey.user_id, passkeyId: passkey.id, counter: info.newCounter, backedUp: info.credentialBackedUp, amr: amrOf(info.credentialDeviceType), spends: used.spends };
    },

    /** Housekeeping: challenges a day past expiry are gone for good. */
    pruneExpiredChallenges: () => challenges.deleteExpired(new Date(clock.now().getTime() - 86_400_000)),
  };
}
export type PasskeysService = ReturnType<typeof createPasskeysService>;
