import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { uuidv7 } from 'uuidv7';
import { recordOwnEvent } from '../audit/service.js';
import { frontendUrl } from '../environments/origins.js';
import type { EnvironmentsService } from '../environments/service.js';
import type { Caller } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { SealedSecretUnreadableError, type Sealer } from '../platform/crypto/encryption.js';
import type { Db } from '../platform/db/database.js';
import { localNotifications, type Notifications } from '../platform/db/notifications.js';
import type { ClientEnvironment, SessionContext } from '../platform/http/planes.js';
import { ProblemError } from '../platform/http/problem.js';
import { jsonByteSize, type JsonObject } from '../platform/json.js';
import { createSharedCache } from '../platform/shared-cache.js';
import type { ActiveOrganization, SessionsService } from '../sessions/service.js';
import { sessionRevoked, signingKeyNotFound, tokenExpired, tokenInvalid } from './errors.js';
import type { PublicJwk, SigningKey } from './schemas.js';
import { createSigningKeysStore, type NewSigningKey, type SigningKeyRecord } from './store.js';

export interface SessionTokensDeps {
  db: Db; clock: Clock; sealer: Sealer;
  notifications?: Notifications;
  environments: Pick<EnvironmentsService, 'record'>;
  sessions: Pick<SessionsService, 'isLive'>;
}

/**
 * How long verifiers and the caches in front of them may keep the JWKS (Cache-Control max-age): no longer than
 * the SDK's own verifier trusts a fetched set (DEFAULT_JWKS_CACHE_SECONDS in packages/sdk/src/verify.ts, which
 * the server cannot import; test/session-tokens/jwks-caching.test.ts holds them equal), so a revoked key does
 * not live on in a shared cache for longer than the SDK's window.
 */
export const JWKS_MAX_AGE_SECONDS = 60;
/** How long the discovery document may be cached: it names the issuer and the JWKS URL, never a key. */
export const DISCOVERY_MAX_AGE_SECONDS = 300;
// A rotated-out key stays published while a token it signed may still be valid: the longest lifetime the
// settings allow, plus a minute for verifiers' clocks.
const RETIRED_KEY_PUBLISHED_SECONDS = 3600 + 60;
/** The user's public metadata rides in the token only while its JSON fits this many bytes. */
export const PUBLIC_METADATA_CLAIM_BYTES = 1024;

interface PublishedKey { kid: string; jwk: PublicJwk; key: KeyObject; until: Date | null }
/** An environment's keys, decrypted once per process (and again after a rotation anywhere). */
interface KeyMaterial { environmentId: string; signer: { kid: string; key: KeyObject }; published: PublishedKey[] }

const toPublicJwk = (row: SigningKeyRecord) => ({ ...row.public_jwk, kid: row.id, alg: 'ES256', use: 'sig' }) as PublicJwk;

function statusOf(row: SigningKeyRecord, now: Date): SigningKey['status'] {
  if (row.revoked_at) return 'revoked';
  if (!row.retired_at) return 'active';
  return row.published_until && row.published_until > now ? 'retired' : 'expired';
}

const toSigningKey = (row: SigningKeyRecord, now: Date): SigningKey => ({
  id: row.id, status: statusOf(row, now), createdAt: row.created_at.toISOString(), retiredAt: row.retired_at?.toISOString() ?? null,
  publishedUntil: row.published_until?.toISOString() ?? null, revokedAt: row.revoked_at?.toISOString() ?? null, publicJwk: toPublicJwk(row),
});

/** A new ES256 key pair: the public half as a JWK, the private half sealed. */
export function newKey(sealer: Sealer): NewSigningKey {
  // Encoded by the generation itself, so no KeyObject shares its key with the generation job. On Node 20 a
  // garbage collection that finalizes that job while the same key exports as a JWK locks the key's mutex twice
  // and hangs the process for good (seen in CI as a start and an environment creation that never finished).
  const { privateKey, publicKey } = generateKeyPairSync('ec', {
    namedCurve: 'P-256', publicKeyEncoding: { type: 'spki', format: 'der' }, privateKeyEncoding: { type: 'pkcs8', format: 'der' },
  });
  const publicJwk = createPublicKey({ key: publicKey, format: 'der', type: 'spki' }).export({ format: 'jwk' }) as JsonObject;
  return { id: uuidv7(), publicJwk, privateKeySealed: sealer.seal(privateKey) };
}

/** The environment's first signing key, in the transaction that creates the environment. */
export const createFirstSigningKey = (trx: Db, environmentId: string, sealer: Sealer, now: Date) =>
  createSigningKeysStore(trx).insertActive(environmentId, newKey(sealer), now);

/**
 * The newest signing key, when the encryption key does not open it: a server started with the wrong key
 * (a backup restored with another one) is stopped before it serves, instead of failing every sign-in. The
 * newest key tells, because after a lost key is replaced, rotating makes a key sealed under the new one.
 */
export async function signingKeyUnderAnotherKey(db: Db, sealer: Sealer): Promise<{ environmentId: string; keyId: string } | undefined> {
  const newest = await createSigningKeysStore(db).findNewestSigning();
  if (!newest) return undefined;
  try {
    sealer.open(newest.private_key_sealed);
    return undefined;
  } catch (err) {
    if (err instanceof SealedSecretUnreadableError) return { environmentId: newest.environment_id, keyId: newest.id };
    throw err;
  }
}

/** The claims of the session's active organization: its id, the user's role key there, and its slug when it has one. */
function organizationClaims(org: ActiveOrganization | null): JWTPayload {
  if (!org) return {};
  return { org_id: org.id, org_role: org.role, ...(org.slug !== null && { org_slug: org.slug }) };
}

/** Session JWTs: each environment's ES256 keys (sealed at rest, rotated and revoked), minting, the JWKS, verification. */
export function createSessionTokensService({ db, clock, sealer, notifications = localNotifications, environments, sessions }: SessionTokensDeps) {
  const cache = createSharedCache<KeyMaterial>({ db, clock, notifications, name: 'signing', idOf: (m) => m.environmentId, ttlMs: 60_000, maxEntries: 10_000 });

  /**
   * The environment's published keys. An environment made before signing keys existed (or by a CLI
   * without the encryption key) gets its first one here; two processes racing make one.
   */
  async function load(environmentId: string): Promise<KeyMaterial> {
    const store = createSigningKeysStore(db);
    let rows = await store.listPublished(environmentId, clock.now());
    if (!rows.some((row) => row.retired_at === null)) {
      await createFirstSigningKey(db, environmentId, sealer, clock.now());
      rows = await store.listPublished(environmentId, clock.now());
    }
    const active = rows.find((row) => row.retired_at === null)!;
    return {
      environmentId,
      signer: { kid: active.id, key: createPrivateKey({ key: sealer.open(active.private_key_sealed), format: 'der', type: 'pkcs8' }) },
      published: rows.map((row) => ({ kid: row.id, jwk: toPublicJwk(row), key: createPublicKey({ key: row.public_jwk as never, format: 'jwk' }), until: row.published_until })),
    };
  }
  const material = async (environmentId: string) => (await cache.get(`env:${environmentId}`, () => load(environmentId)))!;
  const publishedNow = async (environmentId: string) => {
    const now = clock.now();
    return (await material(environmentId)).published.filter((p) => p.until === null || p.until > now);
  };

  /** The keys, newest first; never decrypts one, so keys sealed under a lost encryption key can still be rotated out. */
  async function list(environmentId: string) {
    await environments.record(environmentId);
    const store = createSigningKeysStore(db);
    let rows = await store.listAll(environmentId);
    if (!rows.some((row) => row.retired_at === null && row.revoked_at === null)) {
      await createFirstSigningKey(db, environmentId, sealer, clock.now()); // an environment without keys yet gets its first one here
      rows = await store.listAll(environmentId);
    }
    const now = clock.now();
    return { items: rows.map((row) => toSigningKey(row, now)) };
  }

  /** A key change, announced to every process (they drop their decrypted copies) and recorded in the trail when it changed keys. */
  const changeKeys = (environmentId: string, action: string, by: Caller, change: (store: ReturnType<typeof createSigningKeysStore>, now: Date) => Promise<string[]>) =>
    cache.change(environmentId, async (trx) => {
      const now = clock.now();
      const ids = await change(createSigningKeysStore(trx), now);
      if (ids.length > 0) await recordOwnEvent(trx, environmentId, { action, ...by, targets: ids.map((id) => ({ type: 'signing_key', id })) }, now);
    });

  return {
    /** A JWT of the signed-in session, `session.jwtLifetimeSeconds` long, signed by the environment's current key. */
    async mint(env: ClientEnvironment, session: SessionContext, origin: string | undefined) {
      const { signer } = await material(env.id);
      const issuedAt = Math.floor(clock.now().getTime() / 1000);
      const expiresAt = issuedAt + env.settings.session.jwtLifetimeSeconds;
      const claims: JWTPayload = { sid: session.id };
      if (origin !== undefined && env.allowedOrigins.includes(origin)) claims.azp = origin;
      if (session.impersonatorId) claims.act = { sub: session.impersonatorId };
      if (session.amr.length > 0) claims.amr = session.amr;
      if (jsonByteSize(session.publicMetadata) <= PUBLIC_METADATA_CLAIM_BYTES) claims.public_metadata = session.publicMetadata;
      if (env.settings.session.jwtAudience !== null) claims.aud = env.settings.session.jwtAudience;
      Object.assign(claims, organizationClaims(session.activeOrganization));
      const token = await new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: signer.kid, typ: 'JWT' })
        .setIssuer(frontendUrl(env.frontendHost)).setSubject(session.userId).setIssuedAt(issuedAt).setNotBefore(issuedAt)
        .setExpirationTime(expiresAt).setJti(randomUUID()).sign(signer.key);
      return { token, expiresAt: new Date(expiresAt * 1000).toISOString() };
    },

    jwks: async (environmentId: string) => ({ keys: (await publishedNow(environmentId)).map((p) => p.jwk) }),

    /**
     * The claims of a token of this environment whose session is still live. Only ES256, only this
     * environment's published keys (so another environment's token fails on its kid), only its issuer.
     */
    async verify(environmentId: string, token: string) {
      const { frontendHost } = await environments.record(environmentId);
      const keys = new Map((await publishedNow(environmentId)).map((p) => [p.kid, p.key]));
      const verified = await jwtVerify(token, (header) => {
        const key = keys.get(header.kid ?? '');
        if (!key) throw tokenInvalid('The token was not signed by a key of this environment.');
        return key;
      }, { issuer: frontendUrl(frontendHost), algorithms: ['ES256'], currentDate: clock.now(), requiredClaims: ['sub', 'sid', 'exp'] }).catch((err: unknown) => {
        if (err instanceof ProblemError) throw err;
        throw err instanceof joseErrors.JWTExpired ? tokenExpired() : tokenInvalid();
      });
      const { sub, sid } = verified.payload;
      if (typeof sid !== 'string' || typeof sub !== 'string' || !(await sessions.isLive(environmentId, sub, sid))) throw sessionRevoked();
      return { claims: verified.payload as JsonObject, session: { id: sid, userId: sub } };
    },

    list,
    /** A new key signs at once; the one it replaces stays published until every token it signed has expired. */
    async rotate(environmentId: string, by: Caller) {
      await environments.record(environmentId);
      const key = newKey(sealer);
      await changeKeys(environmentId, 'signing_key.rotated', by, async (store, now) => {
        const retired = await store.retireActive(environmentId, now, new Date(now.getTime() + RETIRED_KEY_PUBLISHED_SECONDS * 1000));
        await store.insertActive(environmentId, key, now);
        return retired ? [key.id, retired.id] : [key.id];
      });
      return list(environmentId);
    },
    /** Takes a key out of the JWKS at once (its tokens stop verifying); a revoked signing key is replaced. */
    async revoke(environmentId: string, keyId: string, by: Caller) {
      await environments.record(environmentId);
      const replacement = newKey(sealer);
      await changeKeys(environmentId, 'signing_key.revoked', by, async (store, now) => {
        const revoked = await store.revoke(environmentId, keyId, now);
        if (!revoked) {
          if (!(await store.find(environmentId, keyId))) throw signingKeyNotFound();
          return []; // revoked already: nothing changes, nothing is recorded
        }
        if (revoked.retired_at === null) await store.insertActive(environmentId, replacement, now);
        return [keyId];
      });
      return list(environmentId);
    },
  };
}
export type SessionTokensService = ReturnType<typeof createSessionTokensService>;
