import { recordOwnEvent } from '../audit/service.js';
import type { Caller } from '../platform/caller.js';
import type { Clock } from '../platform/clock.js';
import { constantTimeEqual, randomToken, sha256 } from '../platform/crypto/tokens.js';
import { inTransaction, transactionWithLock, type Db } from '../platform/db/database.js';
import { localNotifications, type Notifications } from '../platform/db/notifications.js';
import { createSharedCache } from '../platform/shared-cache.js';
import { deepMerge, type JsonObject } from '../platform/json.js';
import { ProblemError } from '../platform/http/problem.js';
import { environmentNotFound, frontendHostTaken, invalidOrigins, invalidSettings, secretKeyNotFound } from './errors.js';
import { normalizeOrigin } from './origins.js';
import type { CreateEnvironmentBody, CreatedEnvironment, Environment, PublicEnvironment, SecretKeyList, UpdateEnvironmentBody } from './schemas.js';
import { resolveSettings, rpIdFits, settingsErrors, type EnvironmentSettings } from './settings.js';
import { createEnvironmentsStore, createSecretKeysStore, type EnvironmentRecord } from './store.js';
import { escapeHatchOrigins } from '../platform/http/planes.js';

declare module '../platform/http/planes.js' {
  /** The client plane resolves the Host header to the environment's full record: its settings come with it. */
  interface ClientEnvironment { settings: EnvironmentSettings; name: string }
}

export interface EnvironmentsDeps {
  db: Db; clock: Clock; defaultFrontendPort: number;
  /** How this process hears that another one changed a key or an environment (evicts cached copies). */
  notifications?: Notifications;
  /** What else a new environment gets in the transaction that creates it (its first signing key). */
  onCreate?: (trx: Db, environmentId: string, now: Date) => Promise<unknown>;
}

// Any constant works; it only has to be the same in every process sharing the database.
const FIRST_ENVIRONMENT_LOCK = 7_262_2027;
const RESERVED_ENVIRONMENT_LOCK = 7_262_2030;

// Secret keys and environments are read on every request; a minute bounds the cost of a missed eviction.
const CACHE = { ttlMs: 60_000, maxEntries: 10_000 };

/** A DNS label from a name: accents dropped (Zürich: zurich), lower-case ASCII letters, digits and inner hyphens, at most 40 characters. */
const slugOf = (name: string) =>
  name.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').slice(0, 40).replace(/^-+|-+$/g, '') || 'env';

/**
 * Browsers leave the default port out of Host and Origin (`app.example.com`, not `app.example.com:443`),
 * so a stored host must too, or no request would ever find its environment.
 */
const normalizeFrontendHost = (host: string) => host.toLowerCase().replace(/:(80|443)$/, '');

const toPublic = ({ id, name, frontendHost, settings, createdAt }: EnvironmentRecord): Environment =>
  ({ id, name, frontendHost, settings, createdAt });

/**
 * The first environment serves the client plane on `localhost:<port>`, the same site as an app's dev server
 * on another localhost port (SameSite cookies travel between them, `<name>.localhost` would be another
 * site), and allows Vite's default dev origin, so a single-page app signs in with the cookie out of the box.
 */
const DEVELOPMENT_ORIGINS = ['http://localhost:5173'];

export function createEnvironmentsService({ db, clock, defaultFrontendPort, notifications = localNotifications, onCreate }: EnvironmentsDeps) {
  const environments = createEnvironmentsStore(db);
  const keys = createSecretKeysStore(db);
  const keyCache = createSharedCache<{ environmentId: string; keyId: string }>({ db, clock, notifications, name: 'key', idOf: (key) => key.keyId, ...CACHE });
  // By `id:<id>` and `host:<host>`.
  const envCache = createSharedCache<EnvironmentRecord>({ db, clock, notifications, name: 'env', idOf: (env) => env.id, ...CACHE });

  /** The full record (settings and allowed origins) for other domains' rules; a reserved environment's too. */
  async function record(id: string): Promise<EnvironmentRecord> {
    const env = await envCache.get(`id:${id}`, () => environments.find(id));
    if (!env) throw environmentNotFound();
    return env;
  }

  /** A customer's environment: a reserved one (the operators') is as absent as a missing one to the APIs that name environments. */
  async function customerRecord(id: string): Promise<EnvironmentRecord> {
    const env = await record(id);
    if (env.reserved !== null) throw environmentNotFound();
    return env;
  }

  function validatedOverrides(current: JsonObject, patch: JsonObject | undefined): JsonObject {
    const overrides = patch ? deepMerge(current, patch) : current;
    const errors = settingsErrors(resolveSettings(overrides));
    // Settings arrive in a request body: name the paths the way request validation does.
    if (errors.length > 0) throw invalidSettings(errors.map((e) => ({ ...e, path: `/body${e.path}` })));
    return overrides;
  }

  /** The passkeys' RP ID must fit the frontend host, whichever of the two changed; checked on the written row, so the transaction undoes it. */
  function checkRpId(env: EnvironmentRecord) {
    const { rpId } = env.settings.passkeys;
    if (rpId !== null && !rpIdFits(rpId, env.frontendHost)) {
      throw invalidSettings([{ path: '/body/settings/passkeys/rpId', message: `must be the frontend host's name or a parent domain of it (frontend host ${env.frontendHost})` }]);
    }
  }

  /** A new key and its audit event, in the caller's transaction; only the key's id is recorded. */
  async function issueKey(trx: Db, environmentId: string, by: Caller) {
    const secretKey = randomToken('sk_');
    const now = clock.now();
    const key = await createSecretKeysStore(trx).insert(environmentId, sha256(secretKey), secretKey.slice(-4), now);
    await recordOwnEvent(trx, environmentId, { action: 'secret_key.created', ...by, targets: [{ type: 'secret_key', id: key.id }] }, now);
    return { id: key.id, secretKey };
  }

  /** With no explicit host, `<slug>.localhost:<port>`, made unique with a suffix if another environment has it. */
  async function insertWithDefaultHost(store: typeof environments, name: string, overrides: JsonObject) {
    const base = slugOf(name);
    for (let attempt = 0; attempt < 5; attempt++) {
      const suffix = attempt === 0 ? '' : `-${randomToken('').slice(0, 6).toLowerCase().replace(/[^a-z0-9]/g, 'x')}`;
      const created = await store.insert({ name, frontendHost: `${base}${suffix}.localhost:${defaultFrontendPort}`, overrides }, clock.now());
      if (created) return created;
    }
    throw frontendHostTaken(`${base}.localhost:${defaultFrontendPort}`);
  }

  /** The environment and its first key (and that key's audit event) land together or not at all. */
  async function createIn(trx: Db, body: CreateEnvironmentBody, by: Caller, allowedOrigins?: string[]): Promise<CreatedEnvironment> {
    const overrides = validatedOverrides({}, body.settings);
    const store = createEnvironmentsStore(trx);
    const frontendHost = body.frontendHost && normalizeFrontendHost(body.frontendHost);
    const env = frontendHost
      ? await store.insert({ name: body.name, frontendHost, overrides, allowedOrigins }, clock.now())
      : await insertWithDefaultHost(store, body.name, overrides);
    if (!env) throw frontendHostTaken(frontendHost!);
    checkRpId(env);
    await onCreate?.(trx, env.id, clock.now());
    const key = await issueKey(trx, env.id, by);
    return { ...toPublic(env), secretKey: key.secretKey, secretKeyId: key.id };
  }

  return {
    create: (body: CreateEnvironmentBody, by: Caller) => inTransaction(db, (trx) => createIn(trx, body, by)),
    /**
     * With no environment yet, creates the first one, `development`; undefined when one exists. Processes
     * that start together on an empty database take turns under an advisory lock, so exactly one creates it.
     */
    createFirst: (by: Caller) => transactionWithLock(db, FIRST_ENVIRONMENT_LOCK, async (trx) =>
      (await createEnvironmentsStore(trx).count()) > 0 ? undefined
        : createIn(trx, { name: 'development', frontendHost: `localhost:${defaultFrontendPort}` }, by, DEVELOPMENT_ORIGINS)),
    async get(id: string): Promise<Environment> {
      const env = await environments.find(id);
      if (!env || env.reserved !== null) throw environmentNotFound();
      return toPublic(env);
    },
    /**
     * The reserved environment for `purpose`, made on first use with these settings: no frontend host that
     * resolves (`.invalid`), no secret key, not listed. Processes that ask together take turns under a lock.
     */
    async reserved(purpose: string, settings: JsonObject): Promise<EnvironmentRecord> {
      const found = await environments.findReserved(purpose);
      if (found) return found;
      return transactionWithLock(db, RESERVED_ENVIRONMENT_LOCK, async (trx) => {
        const store = createEnvironmentsStore(trx);
        return (await store.findReserved(purpose))
          ?? (await store.insert({ name: purpose, frontendHost: `${purpose}.gatehouse.invalid`, overrides: validatedOverrides({}, settings), reserved: purpose }, clock.now()))!;
      });
    },
    customerRecord,
    /** The reserved environment for `purpose`, when it was made; never makes it. */
    findReserved: (purpose: string) => environments.findReserved(purpose),
    /** Whether an id names a customer's environment (not missing, not reserved). */
    isCustomerEnvironment: (id: string) => customerRecord(id).then(() => true, (err: unknown) => {
      if (err instanceof ProblemError && err.code === 'resource_not_found') return false;
      throw err;
    }),
    list: () => environments.list().then((all) => all.map(toPublic)),
    count: () => environments.count(),
    /** Housekeeping: the environments whose audit events expire (setting auditRetentionDays), with their retention. */
    auditRetentions: () => environments.listAuditRetentions(),
    /** Settings deep-merge into the row as it is under a lock, so concurrent changes never undo each other. */
    async update(id: string, body: UpdateEnvironmentBody): Promise<Environment> {
      const frontendHost = body.frontendHost === undefined ? undefined : normalizeFrontendHost(body.frontendHost);
      const updated = await envCache.change(id, async (trx) => {
        const store = createEnvironmentsStore(trx);
        const current = await store.findForUpdate(id);
        if (!current || current.reserved !== null) throw environmentNotFound();
        const overrides = body.settings ? validatedOverrides(current.overrides, body.settings) : undefined;
        const result = await store.update(id, { name: body.name, frontendHost, overrides }, clock.now());
        if (result === 'host_taken') throw frontendHostTaken(frontendHost!);
        if (!result) throw environmentNotFound();
        checkRpId(result);
        return result;
      });
      return toPublic(updated);
    },
    record,
    findByHost: (host: string) => envCache.get(`host:${host.toLowerCase()}`, () => environments.findByHost(host)),

    async createSecretKey(environmentId: string, by: Caller) {
      if ((await environments.find(environmentId))?.reserved !== null) throw environmentNotFound();
      return inTransaction(db, (trx) => issueKey(trx, environmentId, by));
    },
    /** The environment's secret keys, newest first, each with its hint (never the key or its hash). */
    async listSecretKeys(environmentId: string): Promise<SecretKeyList> {
      await customerRecord(environmentId);
      const rows = await keys.listByEnvironment(environmentId);
      return {
        items: rows.map((row) => ({
          id: row.id, hint: row.hint === null ? null : `sk_…${row.hint}`,
          createdAt: row.created_at.toISOString(), revokedAt: row.revoked_at?.toISOString() ?? null,
        })),
      };
    },
    /** Revokes a key and records it in the same transaction; revoking it again answers the same and records nothing. */
    async revokeSecretKey(keyId: string, by: Caller) {
      const revoked = await keyCache.change(keyId, async (trx) => {
        const store = createSecretKeysStore(trx);
        const now = clock.now();
        const key = await store.revoke(keyId, now);
        if (key) {
          await recordOwnEvent(trx, key.environment_id, { action: 'secret_key.revoked', ...by, targets: [{ type: 'secret_key', id: key.id }] }, now);
          return key;
        }
        return store.find(keyId);
      });
      if (!revoked) throw secretKeyNotFound();
      return { id: revoked.id, environmentId: revoked.environment_id };
    },
    /** The environment and key id for a presented secret key; undefined when unknown or revoked. */
    async authenticateSecretKey(secretKey: string) {
      if (!secretKey.startsWith('sk_')) return undefined;
      const hash = sha256(secretKey);
      return keyCache.get(hash.toString('base64'), () =>
        keys.findActiveByHash(hash).then((key) => key && { environmentId: key.environment_id, keyId: key.id }));
    },

    async getAllowedOrigins(environmentId: string) {
      return { origins: (await record(environmentId)).allowedOrigins };
    },
    /**
     * The public configuration of the environment. What is not built yet answers what holds today:
     * sign-up is always open.
     */
    async publicConfiguration(environmentId: string, oauthProviders: PublicEnvironment['oauthProviders']): Promise<PublicEnvironment> {
      const { name, settings } = await record(environmentId);
      return {
        name,
        signUp: { enabled: true, requiredFields: settings.requiredFields, emailVerificationRequired: settings.emailVerificationRequired },
        passwordPolicy: { minLength: settings.passwordPolicy.minLength, maxLength: settings.passwordPolicy.maxLength },
        oauthProviders,
        mfa: { policy: settings.mfa.policy, factors: settings.mfa.policy === 'off' ? [] : ['totp', 'backup_code'] },
        passkeys: { enabled: settings.passkeys.enabled },
        organizations: { selfServiceEnabled: true },
        selfDeletionEnabled: settings.selfDeletionEnabled,
        locales: ['en', 'da'],
      };
    },
    /** The origins accepted beyond the list, so a customer sees the whole effective set (escapeHatchOrigins). */
    async getEscapeHatchOrigins(environmentId: string) {
      return { origins: escapeHatchOrigins((await record(environmentId)).frontendHost) };
    },
    /** Replaces the whole list with normalised, deduplicated origins; any invalid entry refuses the lot. */
    async setAllowedOrigins(environmentId: string, origins: string[]) {
      const normalized = origins.map(normalizeOrigin);
      const errors = normalized.flatMap((o, i) => (o ? [] : [{ path: `/body/origins/${i}`, message: `"${origins[i]}" is not a full origin` }]));
      if (errors.length > 0) throw invalidOrigins(errors);
      const saved = await envCache.change(environmentId, (trx) =>
        createEnvironmentsStore(trx).setAllowedOrigins(environmentId, [...new Set(normalized as string[])], clock.now()));
      if (!saved) throw environmentNotFound();
      return { origins: saved };
    },
  };
}
export type EnvironmentsService = ReturnType<typeof createEnvironmentsService>;

/** The environment's record read in the caller's transaction (a job's), where the cache's own connection must not be waited for. */
export async function environmentIn(trx: Db, id: string): Promise<EnvironmentRecord> {
  const env = await createEnvironmentsStore(trx).find(id);
  if (!env) throw environmentNotFound();
  return env;
}
export type { EnvironmentRecord };
/** What a client-plane flow needs of its environment; the client plane's resolved environment is one. */
export type EnvironmentContext = Pick<EnvironmentRecord, 'id' | 'settings'>;

export const adminTokenMatches = constantTimeEqual;
