import { assertServerConfig, type Config } from '../config.js';
import { createEnvironmentsService } from '../environments/service.js';
import { createOAuthProvidersAdmin } from '../oauth/provider-admin.js';
import { createOrganizationsService } from '../organizations/service.js';
import { systemCaller } from '../platform/caller.js';
import { systemClock } from '../platform/clock.js';
import { createSealer, resolveEncryptionKey } from '../platform/crypto/encryption.js';
import type { Db } from '../platform/db/database.js';
import { createOutboxStore } from '../platform/mail/outbox-store.js';
import { createFirstSigningKey, createSessionTokensService } from '../session-tokens/service.js';
import { createSessionsService } from '../sessions/service.js';
import { createUsersService } from '../users/service.js';
import { registerLifecycleHooks } from '../lifecycle.js';
import { createOperatorAccounts } from '../operators/service.js';

/** The server's encryption key, for the commands that make or read signing keys and provider secrets. */
const sealerOf = (config: Config) => createSealer(resolveEncryptionKey(config.encryptionKey, config.dataDir).key);

/**
 * `env create` gives the environment its first signing key when the encryption key is at hand (always
 * with the embedded database); without it, the key is made on the environment's first token or JWKS request.
 */
function firstSigningKey(config: Config, command: string) {
  if (command !== 'env create' || (config.databaseUrl && !config.encryptionKey)) return undefined;
  const sealer = sealerOf(config);
  return (trx: Db, environmentId: string, now: Date) => createFirstSigningKey(trx, environmentId, sealer, now);
}

/** The services the CLI's commands call, over its database; built when a command first needs one. */
export function cliServices(config: Config, db: Db, command: string) {
  registerLifecycleHooks();
  const clock = systemClock;
  const environments = createEnvironmentsService({ db, clock, defaultFrontendPort: config.port, onCreate: firstSigningKey(config, command) });
  const sessions = () => createSessionsService({ db, clock });
  const users = () => createUsersService({ db, clock, environments, sessions: sessions() });
  return {
    caller: systemCaller('cli'),
    environments,
    outbox: createOutboxStore(db),
    users,
    organizations: () => createOrganizationsService({ db, clock, environments, users: users() }),
    operators: () => createOperatorAccounts({ db, clock, environments, users: users() }),
    signingKeys: () => {
      assertServerConfig(config);
      return createSessionTokensService({ db, clock, sealer: sealerOf(config), environments, sessions: sessions() });
    },
    providers: () => {
      assertServerConfig(config);
      return createOAuthProvidersAdmin({ db, clock, sealer: sealerOf(config), environments });
    },
  };
}
export type Services = ReturnType<typeof cliServices>;
