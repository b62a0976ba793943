import { Command, CommanderError, Option } from 'commander';
import { PACKAGE_VERSION } from './platform/version.js';

/**
 * The `gatehouse` operator CLI on commander: per-command help, --version, did-you-mean, tables for people and
 * --json for scripts. Only the parser loads up front; a command loads the services (and the database) it runs,
 * so --help and --version answer at once.
 */

/** Exit codes, stable for scripts (README "Operate it"). */
export const EXIT = { ok: 0, failure: 1, usage: 2 } as const;

const STORAGE = `
Storage comes from the same variables as the server: DATABASE_URL, else the embedded database in
GATEHOUSE_DATA_DIR (default ./data); signing-keys and oauth-providers also need GATEHOUSE_ENCRYPTION_KEY with
DATABASE_URL. While a server runs on the embedded database, the CLI acts through that server's API.

Exit codes: 0 done, 1 the command failed (the reason is on stderr), 2 usage or configuration error.`;

const program = new Command('gatehouse')
  .description('Operate Gatehouse: environments, keys, users, organizations, allowed origins, mail, operators, migrations.')
  .version(PACKAGE_VERSION, '-v, --version', 'print the version')
  .helpOption('-h, --help', 'show help for a command')
  .option('--json', 'print results as JSON (for scripts) instead of tables')
  .showHelpAfterError('(run with --help for usage)')
  .showSuggestionAfterError(true)
  .addHelpText('after', STORAGE)
  .exitOverride();

/** A command that runs an action of cli/actions.ts; `name` is its key there (`users list`, `migrate`). */
function leaf(parent: Command, name: string, description: string, args: string[] = [], configure: (command: Command) => unknown = () => {}) {
  const command = parent.command(name.split(' ').at(-1)!).description(description);
  for (const arg of args) command.argument(arg);
  configure(command);
  command.action(async (...params: unknown[]) => {
    const self = params.at(-1) as Command;
    const { runCommand } = await import('./cli/run.js');
    await runCommand(name, self.processedArgs.flat().map(String), self.opts(), program.opts().json === true);
  });
}
const group = (name: string, description: string) => program.command(name).description(description).exitOverride();
const pageOptions = (command: Command) => command
  .option('--limit <n>', 'page size, 1 to 100', '20')
  .option('--cursor <id>', "the previous page's nextCursor");

const env = group('env', 'environments');
leaf(env, 'env create', 'create an environment; prints its id, secret key (shown only now) and frontend host', [], (c) => c
  .requiredOption('--name <name>', 'its name').option('--frontend-host <host>', 'the host its client plane answers on (default <name>.localhost:<PORT>)'));
leaf(env, 'env list', 'list environments');
leaf(env, 'env settings', "deep-merge settings into an environment, e.g. '{\"signUpUrl\":\"https://app.example.com/sign-up\"}'", ['<envId>', '<json>']);

const keys = group('keys', 'secret keys of the Server API');
leaf(keys, 'keys create', 'issue another secret key of an environment', ['<envId>']);
leaf(keys, 'keys revoke', 'revoke a secret key; it stops working at once', ['<keyId>']);

const users = group('users', 'users of an environment');
leaf(users, 'users list', 'list users, oldest first', ['<envId>'], (c) => pageOptions(c
  .option('--email-search <text>', 'case-insensitive substring of the email')
  .addOption(new Option('--status <status...>', 'only these statuses').choices(['active', 'banned', 'deleted']))));
leaf(users, 'users get', 'show a user', ['<envId>', '<userId>']);
leaf(users, 'users create', 'create a user (active, email counted as verified)', ['<envId>'], (c) => c
  .option('--email <email>', 'their email').option('--password <password>', 'their password (or GATEHOUSE_USER_PASSWORD, kept out of the shell history)')
  .option('--first-name <name>').option('--last-name <name>').option('--name <name>', 'display name'));
leaf(users, 'users ban', 'ban a user and revoke their sessions', ['<envId>', '<userId>']);
leaf(users, 'users unban', 'unban a user (old sessions stay revoked)', ['<envId>', '<userId>']);

const organizations = group('organizations', 'organizations of an environment');
leaf(organizations, 'organizations list', 'list organizations', ['<envId>'], (c) => pageOptions(c.option('--name <text>', 'case-insensitive substring of the name')));
leaf(organizations, 'organizations get', 'show an organization', ['<envId>', '<organizationId>']);
leaf(organizations, 'organizations members', "list an organization's members", ['<envId>', '<organizationId>'], pageOptions);

const origins = group('allowed-origins', 'origins whose pages may call the client plane (CORS) and be redirect targets');
leaf(origins, 'allowed-origins list', "list an environment's allowed origins", ['<envId>']);
leaf(origins, 'allowed-origins add', 'allow origins, e.g. http://localhost:5173', ['<envId>', '<origins...>']);
leaf(origins, 'allowed-origins remove', 'stop allowing origins', ['<envId>', '<origins...>']);

leaf(program, 'outbox', 'mail kept in the outbox (no GATEHOUSE_SMTP_URL), newest first', ['<envId>'], (c) => c.option('--to <email>', 'only mail to this address'));

const roleSets = group('role-sets', 'organization role sets');
leaf(roleSets, 'role-sets create', 'create a role set', ['<envId>'], (c) => c.requiredOption('--name <name>', 'its name')
  .requiredOption('--roles <roles>', "key:Name,... including owner, e.g. 'owner:Owner,billing:Billing,viewer:Viewer'"));
leaf(roleSets, 'role-sets list', "list an environment's role sets", ['<envId>']);

const signing = group('signing-keys', 'session-JWT signing keys');
leaf(signing, 'signing-keys list', "list an environment's signing keys", ['<envId>']);
leaf(signing, 'signing-keys rotate', 'a new key signs at once; the old one stays published until its tokens expire', ['<envId>']);
leaf(signing, 'signing-keys revoke', 'take a key out of the JWKS at once (a revoked signing key is replaced)', ['<envId>', '<keyId>']);

const providers = group('oauth-providers', 'external sign-in providers (OAuth2, OpenID Connect)');
leaf(providers, 'oauth-providers list', "list an environment's providers (never their secrets)", ['<envId>']);
leaf(providers, 'oauth-providers set', "create or replace a provider, e.g. '{\"type\":\"google\",\"name\":\"Google\",\"clientId\":\"...\"}' "
  + '(the client secret from GATEHOUSE_OAUTH_CLIENT_SECRET when the JSON has none)', ['<envId>', '<providerId>', '<json>']);
leaf(providers, 'oauth-providers delete', "remove a provider (its users' identities stay linked)", ['<envId>', '<providerId>']);

const operators = group('operators', 'operators who sign in to the dashboard');
leaf(operators, 'operators create', 'create an operator; without --password, prints a one-time link to set one', [], (c) => c
  .requiredOption('--email <email>', 'their email')
  .option('--password <password>', 'their password (or GATEHOUSE_OPERATOR_PASSWORD, kept out of the shell history)'));
leaf(operators, 'operators list', 'list operators, oldest first', [], pageOptions);

leaf(program, 'migrate', 'apply pending database migrations');

/** The exit code and message of a failure: usage and configuration errors are 2, anything else that failed 1. */
async function exitCodeOf(err: unknown): Promise<number> {
  if (err instanceof CommanderError) {
    return err.code === 'commander.helpDisplayed' || err.code === 'commander.version' ? EXIT.ok : EXIT.usage;
  }
  const [{ ConfigError }, { UsageError }, { ProblemError }] = await Promise.all([import('./config.js'), import('./cli/actions.js'), import('./platform/http/problem.js')]);
  if (err instanceof UsageError) {
    process.stderr.write(`error: ${err.message}\n(run with --help for usage)\n`);
    return EXIT.usage;
  }
  if (err instanceof ConfigError) {
    process.stderr.write(`${err.message}\n`);
    return EXIT.usage;
  }
  if (err instanceof ProblemError) {
    process.stderr.write(`${err.detail}${err.extra.errors ? `\n${JSON.stringify(err.extra.errors, null, 2)}` : ''}\n`);
    return EXIT.failure;
  }
  process.stderr.write(`${(err as Error).message}\n`);
  return EXIT.failure;
}

program.parseAsync(process.argv).then(
  () => process.exit(EXIT.ok),
  async (err: unknown) => process.exit(await exitCodeOf(err)),
);
