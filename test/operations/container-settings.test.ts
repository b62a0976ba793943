/**
 * The settings the container files pass (Docker cannot run here, so nothing else would notice a typo): the
 * Dockerfile's ENV and compose.yaml's environment name variables the server reads, and compose.yaml's
 * `${...}` substitutions are exactly the settings .env.example offers.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { envPairs, parseDockerfile } from '../helpers/dockerfile.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const compose = read('compose.yaml');

/** The variables loadConfig reads (`env.NAME`). */
const serverVariables = new Set([...read('src/config.ts').matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)].map((match) => match[1]));

describe('the container files', () => {
  it("name only variables the server reads: the Dockerfile's ENV and compose.yaml's environment", () => {
    const imageEnv = parseDockerfile(read('Dockerfile')).at(-1)!.instructions.filter((step) => step.keyword === 'ENV').flatMap((step) => Object.keys(envPairs(step)));
    const composeEnv = [...compose.matchAll(/^ {6}([A-Z][A-Z0-9_]*):/gm)].map((match) => match[1]!);
    expect(imageEnv).toEqual(['HOST', 'PORT', 'GATEHOUSE_DATA_DIR']);
    expect(composeEnv).toEqual(expect.arrayContaining(['DATABASE_URL', 'GATEHOUSE_ENCRYPTION_KEY', 'GATEHOUSE_ADMIN_TOKEN', 'GATEHOUSE_JOB_WORKER']));
    const postgresEnv = ['POSTGRES_USER', 'POSTGRES_DB', 'POSTGRES_PASSWORD'];
    expect([...imageEnv, ...composeEnv].filter((name) => !serverVariables.has(name) && !postgresEnv.includes(name))).toEqual([]);
  });

  it("substitute exactly the settings .env.example offers, the secrets required (compose refuses to start without them)", () => {
    const substituted = new Set([...compose.matchAll(/\$\{([A-Z][A-Z0-9_]*)/g)].map((match) => match[1]));
    const offered = [...read('.env.example').matchAll(/^([A-Z][A-Z0-9_]*)=(.*)$/gm)].map(([, name, value]) => ({ name, value }));
    expect(offered.map(({ name }) => name).sort()).toEqual([...substituted].sort());
    const secrets = offered.filter(({ value }) => value === '').map(({ name }) => name);
    expect(secrets).toEqual(['POSTGRES_PASSWORD', 'GATEHOUSE_ENCRYPTION_KEY', 'GATEHOUSE_ADMIN_TOKEN']);
    for (const secret of secrets) expect(compose).toContain(`\${${secret}:?`);
  });

  it('run the API with GATEHOUSE_JOB_WORKER=off beside a worker container with =only, on PostgreSQL 15 or newer', () => {
    expect(compose).toMatch(/^ {6}GATEHOUSE_JOB_WORKER: "off"$/m);
    expect(compose).toMatch(/^ {6}GATEHOUSE_JOB_WORKER: only$/m);
    expect(Number(/^ {4}image: postgres:(\d+)/m.exec(compose)?.[1])).toBeGreaterThanOrEqual(15);
  });
});
