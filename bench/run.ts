/**
 * Benchmark runner: `npm run bench -- <name>` (or `npx tsx bench/run.ts <name>`).
 * Each bench is a module exporting `description` and `run()`; add new ones to the registry below.
 */
import { installCleanup, stopAllChildren } from './lib/children.js';

interface Bench {
  description: string;
  run(): Promise<unknown>;
}

const registry: Record<string, () => Promise<Bench>> = {
  users: () => import('./users.js'),
  audit: () => import('./audit.js'),
  invitations: () => import('./invitations.js'),
  organizations: () => import('./organizations.js'),
  impersonation: () => import('./impersonation.js'),
  tokens: () => import('./tokens.js'),
  oauth: () => import('./oauth.js'),
  'users-list': () => import('./users-list.js'),
};

function usage(): string {
  return ['Usage: npm run bench -- <name>', '', 'Benches:', ...Object.keys(registry).map((n) => `  ${n}`), '',
    'See bench/README.md for the environment variables.'].join('\n');
}

async function main(): Promise<number> {
  const name = process.argv[2];
  if (!name || name === '--help' || name === '-h') {
    console.log(usage());
    return name ? 0 : 2;
  }
  const load = registry[name];
  if (!load) {
    console.error(`Unknown bench "${name}".\n\n${usage()}`);
    return 2;
  }
  installCleanup();
  const bench = await load();
  try {
    await bench.run();
    return 0;
  } finally {
    await stopAllChildren();
  }
}

main().then((code) => process.exit(code), (err) => {
  console.error(err);
  void stopAllChildren().finally(() => process.exit(1));
});
