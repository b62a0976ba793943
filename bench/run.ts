/**
 * Benchmark runner: `npm run bench -- <name>` (or `npx tsx bench/run.ts <name>`), and `npm run bench -- all`
 * for every bench in turn and one summary table of their figures against their aims.
 * Each bench is a module exporting `description` and `run()`; add new ones to the registry below. A bench's
 * `run()` returns the summary entries of its aims (bench/lib/summary.ts), which is how it joins `all`'s table.
 */
import { installCleanup, stopAllChildren } from './lib/children.js';
import { machineInfo, writeResults } from './lib/report.js';
import { markdownSummary, type SummaryEntry } from './lib/summary.js';

interface Bench {
  description: string;
  run(): Promise<SummaryEntry[] | void>;
}

const registry: Record<string, () => Promise<Bench>> = {
  users: () => import('./users.js'),
  audit: () => import('./audit.js'),
  invitations: () => import('./invitations.js'),
  organizations: () => import('./organizations.js'),
  impersonation: () => import('./impersonation.js'),
  tokens: () => import('./tokens.js'),
  oauth: () => import('./oauth.js'),
  passkeys: () => import('./passkeys.js'),
  'users-list': () => import('./users-list.js'),
  'data-requests': () => import('./data-requests.js'),
  start: () => import('./start.js'),
  history: () => import('./history.js'),
  profile: () => import('./profile.js'),
  factors: () => import('./factors.js'),
  'email-addresses': () => import('./email-addresses.js'),
  'sdk-size': () => import('./sdk-size.js'),
  'sdk-verify': () => import('./sdk-verify.js'),
  'hosted-pages': () => import('./hosted-pages.js'),
  dashboard: () => import('./dashboard.js'),
  webhooks: () => import('./webhooks.js'),
  scaling: () => import('./scaling.js'),
  scim: () => import('./scim.js'),
  'saml-flood': () => import('./saml-flood.js'),
};

function usage(): string {
  return ['Usage: npm run bench -- <name>', '       npm run bench -- all [<name> ...]   (every bench, or the named ones, then one summary table)', '',
    'Benches:', ...Object.keys(registry).map((n) => `  ${n}`), '', 'See bench/README.md for the environment variables.'].join('\n');
}

/** Runs one bench; its entries carry its name. A failure becomes an entry without a result, so `all` goes on. */
async function runOne(name: string): Promise<{ entries: SummaryEntry[]; failed: boolean }> {
  const bench = await registry[name]();
  try {
    const entries = (await bench.run()) ?? [];
    return { entries: entries.map((e) => ({ bench: name, ...e })), failed: false };
  } catch (err) {
    console.error(`\nbench ${name} failed:`, err);
    const message = (err as Error).message?.split('\n')[0] ?? String(err);
    return { entries: [{ bench: name, name: 'the bench failed', value: Number.NaN, unit: 'ratio', aim: { op: '>=', value: 0 }, spread: null, note: message }], failed: true };
  } finally {
    await stopAllChildren();
  }
}

async function runAll(names: string[]): Promise<number> {
  const started = new Date();
  const entries: SummaryEntry[] = [];
  let failures = 0;
  for (const name of names) {
    console.log(`\n# ${name}\n`);
    const result = await runOne(name);
    entries.push(...result.entries);
    if (result.failed) failures++;
  }
  const file = await writeResults('all', { startedAt: started.toISOString(), finishedAt: new Date().toISOString(), benches: names, machine: machineInfo(), entries });
  console.log(`\n## Summary: ${names.join(', ')} (${started.toISOString().slice(0, 16).replace('T', ' ')} UTC, ${((Date.now() - started.getTime()) / 60_000).toFixed(1)} min)\n`);
  console.log(markdownSummary(entries));
  console.log(`\nJSON: ${file}`);
  return failures ? 1 : 0;
}

async function main(): Promise<number> {
  const [name, ...rest] = process.argv.slice(2);
  if (!name || name === '--help' || name === '-h') {
    console.log(usage());
    return name ? 0 : 2;
  }
  const unknown = (name === 'all' ? rest : [name]).filter((n) => !registry[n]);
  if (unknown.length) {
    console.error(`Unknown bench ${unknown.map((n) => `"${n}"`).join(', ')}.\n\n${usage()}`);
    return 2;
  }
  installCleanup();
  if (name === 'all') return runAll(rest.length ? rest : Object.keys(registry));
  const { entries, failed } = await runOne(name);
  if (failed) return 1;
  if (entries.length) console.log(`\n### Summary\n\n${markdownSummary(entries)}`);
  return 0;
}

main().then((code) => process.exit(code), (err) => {
  console.error(err);
  void stopAllChildren().finally(() => process.exit(1));
});
