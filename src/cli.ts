import { parseArgs } from 'node:util';
import { assertServerConfig, ConfigError, loadConfig, type Config } from './config.js';
import { createEnvironmentsService, type EnvironmentsService } from './environments/service.js';
import { PutProviderBody } from './oauth/schemas.js';
import { createOAuthProvidersAdmin } from './oauth/provider-admin.js';
import { CreateRoleSetBody } from './organizations/schemas.js';
import { createOrganizationsService } from './organizations/service.js';
import { Value } from 'typebox/value';
import { systemCaller } from './platform/caller.js';
import { systemClock } from './platform/clock.js';
import { createSealer, resolveEncryptionKey } from './platform/crypto/encryption.js';
import { createFirstSigningKey, createSessionTokensService } from './session-tokens/service.js';
import { createSessionsService } from './sessions/service.js';
import { openDatabase, type Database } from './platform/db/database.js';
import { dataDirHolder, lockDataDir } from './platform/db/data-dir-lock.js';
import { findLocalServer, type LocalServer } from './platform/local-admin.js';
import { migrate } from './platform/db/migrate.js';
import { createOutboxStore } from './platform/mail/outbox-store.js';
import { ProblemError } from './platform/http/problem.js';

const USAGE = `Usage: gatehouse <command>

  env create --name NAME [--frontend-host HOST]   create an environment; prints JSON with id, secretKey, frontendHost
  env list                                        list environments (JSON)
  env settings ID JSON                            deep-merge settings into an environment, e.g. '{"signUpUrl":"https://app.example.com/sign-up"}'
  keys create ENV_ID                              issue another secret key (JSON with id, secretKey)
  keys revoke KEY_ID                              revoke a secret key; it stops working at once
  outbox ENV_ID [--to EMAIL]                      mail kept in the outbox (no GATEHOUSE_SMTP_URL), newest first
  role-sets create ENV_ID --name NAME --roles R    an organization role set; R is key:Name,... and must include owner,
                                                  e.g. 'owner:Owner,billing:Billing,viewer:Viewer' (prints JSON with id)
  role-sets list ENV_ID                           the environment's role sets (JSON)
  signing-keys list ENV_ID                        the environment's session-JWT signing keys (JSON)
  signing-keys rotate ENV_ID                      a new key signs at once; the old one stays published until its tokens expire
  signing-keys revoke ENV_ID KEY_ID               take a key out of the JWKS at once (a revoked signing key is replaced)
  oauth-providers list ENV_ID                     the environment's external sign-in providers (JSON, never secrets)
  oauth-providers set ENV_ID PROVIDER_ID JSON     create or replace a provider, e.g. '{"type":"google","name":"Google","clientId":"..."}';
                                                  the client secret is read from GATEHOUSE_OAUTH_CLIENT_SECRET when JSON has none
  oauth-providers delete ENV_ID PROVIDER_ID       remove a provider (its users' identities stay linked)
  migrate                                         apply pending database migrations

Storage comes from the same variables as the server: DATABASE_URL, else the embedded database in
GATEHOUSE_DATA_DIR (default ./data); signing-keys and oauth-providers commands also GATEHOUSE_ENCRYPTION_KEY (required with DATABASE_URL). The embedded database serves one process at a time:
while a server runs on it, the CLI acts through that server's admin API, with the token the server keeps
in the data directory.`;

class UsageError extends Error {}

const COMMANDS = new Set(['env create', 'env list', 'env settings', 'keys create', 'keys revoke', 'role-sets create', 'role-sets list',
  'signing-keys list', 'signing-keys rotate', 'signing-keys revoke', 'oauth-providers list', 'oauth-providers set', 'oauth-providers delete', 'outbox', 'migrate']);

const print = (value: unknown) => console.log(JSON.stringify(value, null, 2));

async function withDatabase<T>(config: Config, fn: (database: Database) => Promise<T>): Promise<T> {
  const unlock = config.databaseUrl ? () => {} : lockDataDir(config.dataDir);
  try {
    const database = await openDatabase(config.databaseUrl ? { url: config.databaseUrl } : { dataDir: config.dataDir });
    try {
      const ran = await migrate(database.db);
      if (ran.length > 0) console.error(`Applied migrations: ${ran.join(', ')}`);
      return await fn(database);
    } finally {
      await database.close();
    }
  } finally {
    unlock();
  }
}

function parseJson(text: string | undefined, what: string) {
  if (!text) throw new UsageError(`Missing ${what}.`);
  try { return JSON.parse(text); } catch { throw new UsageError(`${what} is not valid JSON: ${text}`); }
}

/** `owner:Owner,billing:Billing` as role definitions; a role without a name is named after its key. */
function parseRoles(text: string) {
  return text.split(',').map((entry) => entry.trim()).filter(Boolean).map((entry) => {
    const [key, ...name] = entry.split(':');
    return { key: key!.trim(), name: name.join(':').trim() || key!.trim() };
  });
}

/** The server's encryption key, for the commands that make or read signing keys. */
const sealerOf = (config: Config) => createSealer(resolveEncryptionKey(config.encryptionKey, config.dataDir).key);

/** The session-token service over the CLI's database, with the server's encryption key. */
function signingKeys(config: Config, db: Database['db'], environments: EnvironmentsService) {
  assertServerConfig(config);
  return createSessionTokensService({ db, clock: systemClock, sealer: sealerOf(config), environments, sessions: createSessionsService({ db, clock: systemClock }) });
}

/**
 * `env create` gives the environment its first signing key when the encryption key is at hand (always
 * with the embedded database); without it, the key is made on the environment's first token or JWKS request.
 */
function firstSigningKey(config: Config, command: string) {
  if (command !== 'env create' || (config.databaseUrl && !config.encryptionKey)) return undefined;
  const sealer = sealerOf(config);
  return (trx: Database['db'], environmentId: string, now: Date) => createFirstSigningKey(trx, environmentId, sealer, now);
}

/** The provider JSON of `oauth-providers set`, with the secret from the environment when it holds none; checked like a PUT body. */
function providerBody(text: string | undefined) {
  const given = parseJson(text, 'provider JSON');
  const secret = process.env.GATEHOUSE_OAUTH_CLIENT_SECRET;
  const body = Value.Default(PutProviderBody, { ...(secret && { clientSecret: secret }), ...given });
  const invalid = [...Value.Errors(PutProviderBody, body)].map((e) => `${e.instancePath || '/'} ${e.message}`);
  if (invalid.length > 0) throw new UsageError(`Invalid provider: ${invalid.join('; ')}.`);
  return body as PutProviderBody;
}

// Role-set commands never read users.
const unavailable = (): never => { throw new Error('users are not read by this command'); };

/** A command of the CLI as a call of the running server's admin API, and how to print its answer. */
function adminCall(command: string, rest: string[], values: { name?: string; 'frontend-host'?: string; to?: string; roles?: string }) {
  const need = (n: number, what: string) => { if (rest.length < n || rest.slice(0, n).some((r) => !r)) throw new UsageError(`${command} needs ${what}.`); };
  const env = `/environments/${rest[0]}`;
  switch (command) {
    case 'env create':
      if (!values.name) throw new UsageError('env create needs --name NAME.');
      return { method: 'POST', path: '/environments', body: { name: values.name, frontendHost: values['frontend-host'] } };
    case 'env list': return { method: 'GET', path: '/environments', items: true };
    case 'env settings': need(1, 'ID and JSON'); return { method: 'PATCH', path: env, body: { settings: parseJson(rest[1], 'settings JSON') } };
    case 'keys create': need(1, 'ENV_ID'); return { method: 'POST', path: `${env}/secret-keys` };
    case 'keys revoke': need(1, 'KEY_ID'); return { method: 'DELETE', path: `/secret-keys/${rest[0]}`, done: `Revoked key ${rest[0]}.` };
    case 'outbox': need(1, 'ENV_ID'); return { method: 'GET', path: `${env}/outbox${values.to ? `?to=${encodeURIComponent(values.to)}` : ''}`, items: true };
    case 'role-sets create':
      need(1, 'ENV_ID, --name NAME and --roles key:Name,...');
      if (!values.name || !values.roles) throw new UsageError('role-sets create needs ENV_ID, --name NAME and --roles key:Name,...');
      return { method: 'POST', path: `${env}/role-sets`, body: { name: values.name, roles: parseRoles(values.roles) } };
    case 'role-sets list': need(1, 'ENV_ID'); return { method: 'GET', path: `${env}/role-sets` };
    case 'signing-keys list': need(1, 'ENV_ID'); return { method: 'GET', path: `${env}/signing-keys` };
    case 'signing-keys rotate': need(1, 'ENV_ID'); return { method: 'POST', path: `${env}/signing-keys/rotate` };
    case 'signing-keys revoke': need(2, 'ENV_ID and KEY_ID'); return { method: 'DELETE', path: `${env}/signing-keys/${rest[1]}` };
    case 'oauth-providers list': need(1, 'ENV_ID'); return { method: 'GET', path: `${env}/oauth-providers` };
    case 'oauth-providers set': need(2, 'ENV_ID and PROVIDER_ID'); return { method: 'PUT', path: `${env}/oauth-providers/${rest[1]}`, body: providerBody(rest[2]) };
    case 'oauth-providers delete': need(2, 'ENV_ID and PROVIDER_ID'); return { method: 'DELETE', path: `${env}/oauth-providers/${rest[1]}`, done: `Deleted provider ${rest[1]}.` };
    default: return undefined; // migrate: the running server migrated the database when it started
  }
}

/** Runs the command through the server that holds the embedded database, as its admin API. */
async function runThroughServer(server: LocalServer, command: string, rest: string[], values: Parameters<typeof adminCall>[2]) {
  const call = adminCall(command, rest, values);
  if (!call) return console.error('The running server keeps the database up to date.');
  const res = await fetch(`${server.url}/api/admin/v1${call.path}`, {
    method: call.method, headers: { authorization: `Bearer ${server.token}`, ...(call.body && { 'content-type': 'application/json' }) },
    ...(call.body && { body: JSON.stringify(call.body) }),
  }).catch((err: unknown) => { throw new Error(`The server of this data directory (pid ${server.pid}, ${server.url}) did not answer: ${(err as Error).message}`); });
  const answer = res.status === 204 ? undefined : await res.json() as { items?: unknown; detail?: string; properties?: { errors?: unknown } };
  if (!res.ok) throw new ProblemError(res.status, 'admin_api', answer?.detail ?? `HTTP ${res.status}`, answer?.properties?.errors ? { errors: answer.properties.errors as never } : {});
  if (call.done) return console.error(call.done);
  return print(call.items ? answer?.items : answer);
}

async function run(argv: string[]) {
  const { positionals, values } = parseArgs({
    args: argv, allowPositionals: true, strict: true,
    options: { name: { type: 'string' }, 'frontend-host': { type: 'string' }, to: { type: 'string' }, roles: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [group, action, ...rest] = positionals;
  if (values.help || !group) return console.log(USAGE);
  const config = loadConfig();
  const command = group === 'migrate' || group === 'outbox' ? group : `${group} ${action ?? ''}`.trim();
  if (!COMMANDS.has(command)) throw new UsageError(`Unknown command "${positionals.join(' ')}".`);

  // The embedded database is held by a running server: act through it.
  const server = config.databaseUrl ? undefined : findLocalServer(config.dataDir);
  if (server && dataDirHolder(config.dataDir) === server.pid) return runThroughServer(server, command, group === 'outbox' ? [action ?? '', ...rest] : rest, values);

  await withDatabase(config, async ({ db }) => {
    const environments = createEnvironmentsService({ db, clock: systemClock, defaultFrontendPort: config.port, onCreate: firstSigningKey(config, command) });
    switch (command) {
      case 'migrate':
        return console.error('Database is up to date.');
      case 'env create':
        if (!values.name) throw new UsageError('env create needs --name NAME.');
        return print(await environments.create({ name: values.name, frontendHost: values['frontend-host'] }, systemCaller('cli')));
      case 'env list':
        return print(await environments.list());
      case 'env settings':
        if (!rest[0]) throw new UsageError('env settings needs ID and JSON.');
        return print(await environments.update(rest[0], { settings: parseJson(rest[1], 'settings JSON') }));
      case 'keys create':
        if (!rest[0]) throw new UsageError('keys create needs ENV_ID.');
        return print(await environments.createSecretKey(rest[0], systemCaller('cli')));
      case 'keys revoke':
        if (!rest[0]) throw new UsageError('keys revoke needs KEY_ID.');
        await environments.revokeSecretKey(rest[0], systemCaller('cli'));
        return console.error(`Revoked key ${rest[0]}.`);
      case 'role-sets create': {
        if (!rest[0] || !values.name || !values.roles) throw new UsageError('role-sets create needs ENV_ID, --name NAME and --roles key:Name,...');
        const body = { name: values.name, roles: parseRoles(values.roles) };
        const invalid = [...Value.Errors(CreateRoleSetBody, body)].map((e) => `${e.instancePath} ${e.message}`);
        if (invalid.length > 0) throw new UsageError(`Invalid role set: ${invalid.join('; ')}.`);
        return print(await createOrganizationsService({ db, clock: systemClock, environments, users: { get: unavailable } }).createRoleSet(rest[0], body));
      }
      case 'role-sets list':
        if (!rest[0]) throw new UsageError('role-sets list needs ENV_ID.');
        return print(await createOrganizationsService({ db, clock: systemClock, environments, users: { get: unavailable } }).listRoleSets(rest[0]));
      case 'signing-keys list':
      case 'signing-keys rotate':
      case 'signing-keys revoke': {
        if (!rest[0] || (command === 'signing-keys revoke' && !rest[1])) throw new UsageError(`${command} needs ENV_ID${command.endsWith('revoke') ? ' and KEY_ID' : ''}.`);
        const tokens = signingKeys(config, db, environments);
        if (command === 'signing-keys list') return print(await tokens.list(rest[0]));
        if (command === 'signing-keys rotate') return print(await tokens.rotate(rest[0], systemCaller('cli')));
        return print(await tokens.revoke(rest[0], rest[1]!, systemCaller('cli')));
      }
      case 'oauth-providers list':
      case 'oauth-providers set':
      case 'oauth-providers delete': {
        if (!rest[0] || (command !== 'oauth-providers list' && !rest[1])) throw new UsageError(`${command} needs ENV_ID${command.endsWith('list') ? '' : ' and PROVIDER_ID'}.`);
        assertServerConfig(config);
        const providers = createOAuthProvidersAdmin({ db, clock: systemClock, sealer: sealerOf(config), environments });
        if (command === 'oauth-providers list') return print(await providers.listProviders(rest[0]));
        if (command === 'oauth-providers set') return print((await providers.putProvider(rest[0], rest[1]!, providerBody(rest[2]), systemCaller('cli'))).provider);
        await providers.deleteProvider(rest[0], rest[1]!, systemCaller('cli'));
        return console.error(`Deleted provider ${rest[1]}.`);
      }
      case 'outbox':
        if (!action) throw new UsageError('outbox needs ENV_ID.');
        await environments.get(action);
        return print(await createOutboxStore(db).list(action, values.to));
    }
  });
}

run(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    process.exit(64);
  }
  if (err instanceof ProblemError) {
    console.error(`${err.detail}${err.extra.errors ? `\n${JSON.stringify(err.extra.errors, null, 2)}` : ''}`);
    process.exit(1);
  }
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(2);
  }
  console.error((err as Error).message);
  process.exit(1);
});
