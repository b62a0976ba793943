/**
 * The SDK as an adopter gets it: packed by npm (which builds dist/), installed from the tarball into a
 * directory outside the repository, then run by plain `node` (ESM and CommonJS, Node.js 20 and 24) and
 * type-checked by `tsc` under @tsconfig/node20 with strict, exactOptionalPropertyTypes and skipLibCheck off.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createClientPlane } from '@gatehouse/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import { PASSWORD } from '../helpers/given.js';
import { PATIENCE_MS } from '../helpers/patience.js';
import { postEnvironmentOnOwnHost } from '../helpers/own-frontend-host.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const versionOf = async (name: string) => JSON.parse(await readFile(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version as string;
// Installing takes the registry (or npm's cache); a slow one is not a failure.
const INSTALL_PATIENCE_MS = 10 * PATIENCE_MS;

/** The environment of a process run as an adopter's: none of the npm_* settings `npm test` hands its children (its prefix is this repository). */
const adopterEnv = (extra: Record<string, string> = {}) => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key))), ...extra,
});

// A delivery signed as the Standard Webhooks spec says (HMAC-SHA256 of "id.timestamp.body", node:crypto, no
// library), verified by the packed SDK's verifyWebhook (its standardwebhooks dependency loaded as ESM and CJS).
const WEBHOOK_CHECK = `const key = Buffer.from('an installed endpoint secret 32b');
const at = Math.floor(Date.now() / 1000);
const body = JSON.stringify({ type: 'user.created', timestamp: new Date().toISOString(), data: { id: 'u1' } });
const signature = 'v1,' + createHmac('sha256', key).update('msg_1.' + at + '.' + body).digest('base64');
const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(at), 'webhook-signature': signature };
const secret = 'whsec_' + key.toString('base64');
let forged;
try { verifyWebhook(body.replace('u1', 'u2'), headers, secret); } catch (e) { forged = e instanceof WebhookVerificationError && e.code; }
console.log('webhook', verifyWebhook(Buffer.from(body), headers, secret).type, forged);`;

const ESM_APP = `import { createHmac } from 'node:crypto';
import { createServerClient, createSessionVerifier, GatehouseError, verifyWebhook, WebhookVerificationError } from '@gatehouse/sdk';

const verifier = createSessionVerifier({ frontendUrl: process.env.GATEHOUSE_FRONTEND_URL });
const session = await verifier.verifyToken(process.env.SESSION_JWT);
const gatehouse = createServerClient({ baseUrl: process.env.GATEHOUSE_URL, secretKey: process.env.GATEHOUSE_SECRET_KEY });
const user = await gatehouse.getUser({ userId: session.userId });
let missingKey;
try { createServerClient({ baseUrl: process.env.GATEHOUSE_URL, secretKey: process.env.UNSET_KEY }); } catch (e) { missingKey = e instanceof GatehouseError && e.code; }
console.log('esm', user.email, session.userId === user.id, missingKey);
${WEBHOOK_CHECK}
`;

const CJS_APP = `const { createHmac } = require('node:crypto');
const { createServerClient, createSessionVerifier, GatehouseError, verifyWebhook, WebhookVerificationError } = require('@gatehouse/sdk');

(async () => {
  const verifier = createSessionVerifier({ frontendUrl: process.env.GATEHOUSE_FRONTEND_URL });
  const session = await verifier.verifyToken(process.env.SESSION_JWT);
  const gatehouse = createServerClient({ baseUrl: process.env.GATEHOUSE_URL, secretKey: process.env.GATEHOUSE_SECRET_KEY });
  const user = await gatehouse.getUser({ userId: session.userId });
  let missingKey;
  try { createServerClient({ baseUrl: process.env.GATEHOUSE_URL, secretKey: process.env.UNSET_KEY }); } catch (e) { missingKey = e instanceof GatehouseError && e.code; }
  console.log('cjs', user.email, session.userId === user.id, missingKey);
  ${WEBHOOK_CHECK}
})();
`;

const TS_APP = `import { createClientPlane, createServerClient, createSessionVerifier, GatehouseError, verifyWebhook, type CallOptions } from '@gatehouse/sdk';

// Options an app fills from its environment may be undefined (exactOptionalPropertyTypes).
const gatehouse = createServerClient({ baseUrl: 'http://localhost:3000', secretKey: process.env.GATEHOUSE_SECRET_KEY ?? '', timeoutMs: undefined, maxRetries: 2 });
const app = createClientPlane({ frontendUrl: 'http://localhost:3000', credentials: 'include', native: undefined });
const verifier = createSessionVerifier({ frontendUrl: 'http://localhost:3000' });
const options: CallOptions = { timeoutMs: 5000, signal: undefined };

export async function adopter(): Promise<string> {
  const user = await gatehouse.createUser({ email: 'ada@example.com', publicMetadata: { plan: 'pro' } }, options);
  // @ts-expect-error \`emial\` is not a field of createUser: the types are the SDK's, not any.
  await gatehouse.createUser({ emial: 'ada@example.com' });
  for await (const listed of gatehouse.paginate('listUsers', { limit: 10 })) void listed.id;
  const signedIn = await app.signIn({ email: user.email ?? '', password: 'x' });
  const session = await verifier.verify(new Request('http://api.example.com/', { headers: { authorization: 'Bearer x' } }));
  try {
    await gatehouse.getUser({ userId: user.id });
  } catch (e) {
    if (e instanceof GatehouseError) return e.code;
  }
  return 'mfaRequired' in signedIn ? 'mfa' : \`\${signedIn.user.id} \${session?.userId ?? ''}\`;
}

export function webhook(body: Buffer, headers: Record<string, string | string[] | undefined>): string {
  const event = verifyWebhook(body, headers, process.env.GATEHOUSE_WEBHOOK_SECRET ?? '');
  // @ts-expect-error \`user.signed_up\` is no webhook event type.
  if (event.type === 'user.signed_up') return '';
  return event.type === 'user.banned' ? event.data.targets.map((t) => t.id).join() : event.data.actor.type;
}
`;

// A CommonJS module of the same app: its import resolves the package's "require" types (index.d.cts).
const CTS_APP = `import { createServerClient, GatehouseError } from '@gatehouse/sdk';

export const gatehouse = createServerClient({ baseUrl: 'http://localhost:3000', secretKey: 'sk_test' });
export const isGatehouseError = (e: unknown): e is GatehouseError => e instanceof GatehouseError;
`;

const TSCONFIG = {
  extends: '@tsconfig/node20/tsconfig.json',
  compilerOptions: { strict: true, exactOptionalPropertyTypes: true, skipLibCheck: false, noEmit: true },
  include: ['app.ts', 'app-cjs.cts'],
};

let t: TestApp;
let env: TestEnv;
let frontendUrl: string;
let baseUrl: string;
let work: string;
let appDir: string;

beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (t.app.server.address() as AddressInfo).port;
  baseUrl = `http://127.0.0.1:${port}`;
  frontendUrl = `http://localhost:${port}`;
  env = { ...(await postEnvironmentOnOwnHost(t, { name: 'install', frontendHost: `localhost:${port}` })).json(), name: 'install' };
  await t.given.user(env, { email: 'installed@example.com' });

  work = await mkdtemp(join(tmpdir(), 'gatehouse-sdk-install-'));
  await run('npm', ['pack', '-w', '@gatehouse/sdk', '--pack-destination', work], { cwd: ROOT, env: adopterEnv(), timeout: INSTALL_PATIENCE_MS });
  const [tarball] = (await readdir(work)).filter((name) => name.endsWith('.tgz'));
  appDir = join(work, 'app');
  await mkdir(appDir);
  await writeFile(join(appDir, 'package.json'), JSON.stringify({ name: 'sdk-adopter', private: true, type: 'module' }));
  const tools = [`@tsconfig/node20@${await versionOf('@tsconfig/node20')}`, `@types/node@${await versionOf('@types/node')}`];
  await run('npm', ['install', join(work, tarball!), ...tools, '--prefer-offline', '--no-audit', '--no-fund'], { cwd: appDir, env: adopterEnv(), timeout: INSTALL_PATIENCE_MS });
  await writeFile(join(appDir, 'app.mjs'), ESM_APP);
  await writeFile(join(appDir, 'app.cjs'), CJS_APP);
  await writeFile(join(appDir, 'app.ts'), TS_APP);
  await writeFile(join(appDir, 'app-cjs.cts'), CTS_APP);
  await writeFile(join(appDir, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
});
afterAll(async () => {
  await t?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

/**
 * A fresh session JWT (they live 60 s), minted just before the app that verifies it starts. The app checks it
 * against real time, and the test clock stood still since beforeAll (npm pack and install can take minutes):
 * the clock is moved to now first.
 */
async function sessionJwt(): Promise<string> {
  t.clock.set(new Date());
  const app = createClientPlane({ frontendUrl, native: true });
  await app.signIn({ email: 'installed@example.com', password: PASSWORD });
  return (await app.createSessionToken()).token;
}

/** Runs `node <file>` in the adopter's directory with plain Node (`command` is node, or npx with node@24). */
async function runApp(command: string[], file: string): Promise<string> {
  const [bin, ...args] = command;
  const { stdout } = await run(bin!, [...args, file], {
    cwd: appDir, timeout: INSTALL_PATIENCE_MS,
    env: adopterEnv({ GATEHOUSE_URL: baseUrl, GATEHOUSE_FRONTEND_URL: frontendUrl, GATEHOUSE_SECRET_KEY: env.secretKey, SESSION_JWT: await sessionJwt() }),
  });
  return stdout.trim();
}

describe('the packed SDK installed outside the repository', () => {
  it('holds the built JavaScript and types, and no test or build files', async () => {
    const files = await readdir(join(appDir, 'node_modules/@gatehouse/sdk'), { recursive: true });
    expect(files).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts', 'CHANGELOG.md', 'README.md', 'LICENSE', 'package.json']));
    expect(files.filter((file) => /tsup|tsconfig/.test(file))).toEqual([]);
  });

  it('verifies a session offline, calls the Server API and verifies a webhook under plain node 20, as ESM and as CommonJS', async () => {
    expect(await runApp([process.execPath], 'app.mjs')).toBe('esm installed@example.com true missing_option\nwebhook user.created invalid_signature');
    expect(await runApp([process.execPath], 'app.cjs')).toBe('cjs installed@example.com true missing_option\nwebhook user.created invalid_signature');
  });

  it('does the same under plain node 24', async () => {
    const node24 = ['npx', '-y', '-p', 'node@24', 'node'];
    expect(await runApp(node24, 'app.mjs')).toBe('esm installed@example.com true missing_option\nwebhook user.created invalid_signature');
    expect(await runApp(node24, 'app.cjs')).toBe('cjs installed@example.com true missing_option\nwebhook user.created invalid_signature');
  });

  it('type-checks in an app under @tsconfig/node20 with strict, exactOptionalPropertyTypes and skipLibCheck off', async () => {
    const tsc = join(ROOT, 'node_modules/typescript/bin/tsc');
    const result = await run(process.execPath, [tsc, '-p', '.'], { cwd: appDir, timeout: INSTALL_PATIENCE_MS }).catch((e: { stdout: string }) => e);
    expect(result.stdout).toBe('');
  });
});
