/**
 * The OpenAPI document the server serves at /openapi.json, built from the routes without a database server
 * or a port. `npx tsx scripts/openapi.ts` prints it; `npm run openapi` (`--sdk`) writes it and the types
 * generated from it into packages/sdk, where the linter reads it (`npm run lint:openapi`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.js';
import { systemClock } from '../src/platform/clock.js';
import { openDatabase } from '../src/platform/db/database.js';
import { sdkSources } from './sdk-sources.js';

const database = await openDatabase({ dataDir: undefined });
const app = await buildApp({ db: database.db, clock: systemClock, publicPort: 3000, adminToken: 'openapi', logLevel: 'silent', encryptionKey: Buffer.alloc(32) });
await app.ready();
const doc = JSON.parse(JSON.stringify(app.swagger()));
await app.close();
await database.close();

if (process.argv[2] === '--sdk') {
  for (const [file, text] of Object.entries(await sdkSources(doc))) {
    const path = fileURLToPath(new URL(`../packages/sdk/${file}`, import.meta.url));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    console.error(`wrote packages/sdk/${file}`);
  }
} else {
  process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
}
