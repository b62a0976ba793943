import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp, type TestEnv } from '../helpers/app.js';
import type { TestSession, TestUser } from '../helpers/given.js';
import { append, eventBody } from '../audit/support.js';
import { arbitraryOf, asHeader, asText, encodeComponent, jsonText, mutate, mutation, type Hints, type Schema } from './fuzz-support.js';

/**
 * Walks every operation of /openapi.json and sends schema-derived valid requests with one value mutated
 * (text PostgreSQL cannot store, huge and negative numbers, long text, wrong types, deep nesting, unknown
 * keys). Any 5xx, and any error that is not problem+json with a code, fails the test.
 */

const SEED = 14;
const RUNS_PER_OPERATION = 40;

interface Parameter { in: 'path' | 'query' | 'header'; name: string; required?: boolean; schema: Schema }
interface Operation { method: string; path: string; parameters?: Parameter[]; requestBody?: { content: Partial<Record<'application/json' | 'application/x-www-form-urlencoded', { schema: Schema }>> } }

let t: TestApp;
let env: TestEnv;
/** Another environment for the admin operations that change or add to one, so the fixture keeps working. */
let scratchEnv: TestEnv;
let user: TestUser;
/** A user the destructive operations (ban, revoke sessions) may use up, and one to delete. */
let scratchUser: TestUser;
let doomedUser: TestUser;
let session: TestSession;
/** The scratch user's session: revoking it (by the Server API) harms nothing; the client plane cannot see it. */
let scratchSession: TestSession;
let invitationId: string;
let eventId: string;

beforeAll(async () => {
  t = await startTestApp();
  env = await t.given.environment({ signUpUrl: 'https://app.example.com/sign-up' });
  scratchEnv = await t.given.environment();
  user = await t.given.user(env);
  scratchUser = await t.given.user(env);
  doomedUser = await t.given.user(env);
  session = await t.given.session(env, user);
  scratchSession = await t.given.session(env, scratchUser);
  const invitation = await t.server(env).post('/invitations', { email: `invited-${randomUUID()}@example.com`, publicMetadata: {}, privateMetadata: {} });
  expect(invitation.statusCode, invitation.body).toBe(201);
  invitationId = invitation.json().id;
  const event = await append(t, env, eventBody(t));
  expect(event.statusCode, event.body).toBe(201);
  eventId = event.json().id;
});
afterAll(() => t.close());

/** Real ids where an operation on them is harmless, so valid requests get past the lookups. */
function pathParams(op: Operation): Record<string, string> {
  const destructive = op.method === 'DELETE' || /\/(ban|unban)$/.test(op.path);
  return {
    userId: op.path.endsWith('/users/{userId}') && op.method === 'DELETE' ? doomedUser.id : destructive ? scratchUser.id : user.id,
    // Never the fixture session: revoking it would sign the client plane out for the operations after it.
    sessionId: scratchSession.id,
    invitationId, eventId,
    id: op.method === 'GET' ? env.id : scratchEnv.id,
    // Revoking the fixture's secret key would lock the Server API.
    keyId: randomUUID(),
  };
}

/** The credentials of the operation's plane. */
function planeHeaders(path: string): Record<string, string> {
  if (path.startsWith('/api/server/')) return { authorization: `Bearer ${env.secretKey}` };
  if (path.startsWith('/api/admin/')) return { authorization: `Bearer ${ADMIN_TOKEN}` };
  return { host: env.frontendHost, authorization: `Bearer ${session.token}` };
}

/** A valid request for the operation: `{ params, query, headers, body }`. */
function requestOf(op: Operation, hints: Hints): fc.Arbitrary<Record<string, unknown>> {
  const part = (where: Parameter['in']) => {
    const parameters = (op.parameters ?? []).filter((p) => p.in === where);
    const model = Object.fromEntries(parameters.map((p) => [p.name, arbitraryOf(p.schema, hints, p.name)]));
    return fc.record(model, { requiredKeys: parameters.filter((p) => p.required).map((p) => p.name) });
  };
  const body = op.requestBody ? arbitraryOf((op.requestBody.content['application/json'] ?? op.requestBody.content[FORM])!.schema, hints) : fc.constant(undefined);
  const real = pathParams(op);
  const params = part('path').map((generated) => Object.fromEntries(Object.keys(generated).map((name) => [name, real[name] ?? generated[name]])));
  return fc.record({ params, query: part('query'), headers: part('header'), body });
}

/** A form a SAML IdP's page posts (the one operation whose body is not JSON). */
const FORM = 'application/x-www-form-urlencoded';
const formText = (body: unknown) => (body !== null && typeof body === 'object' && !Array.isArray(body)
  ? new URLSearchParams(Object.entries(body).map(([name, value]) => [name, asText(value)])).toString()
  : asText(body));

function send(op: Operation, request: Record<string, unknown>): Promise<LightMyRequestResponse> {
  const params = request.params as Record<string, unknown>;
  const url = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeComponent(asText(params[name])));
  const query = Object.entries(request.query as Record<string, unknown>)
    .flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((v) => `${encodeComponent(name)}=${encodeComponent(asText(v))}`));
  const headers = Object.fromEntries(Object.entries(request.headers as Record<string, unknown>).map(([name, value]) => [name, asHeader(value)]));
  const hasBody = 'body' in request && request.body !== undefined;
  const form = op.requestBody !== undefined && !op.requestBody.content['application/json'];
  return t.app.inject({
    method: op.method as 'GET', url: url + (query.length > 0 ? `?${query.join('&')}` : ''),
    headers: { ...planeHeaders(op.path), ...headers, ...(hasBody && { 'content-type': form ? FORM : 'application/json' }) },
    ...(hasBody && { payload: form ? formText(request.body) : jsonText(request.body) }),
  });
}

/** The document with every component reference replaced by the schema it names, so generators see whole schemas. */
function inlineRefs(doc: { components?: { schemas?: Record<string, unknown> } }): unknown {
  const schemas = doc.components?.schemas ?? {};
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline);
    if (typeof node !== 'object' || node === null) return node;
    const { $ref, ...rest } = node as { $ref?: string };
    if ($ref) return { ...(inline(schemas[$ref.replace('#/components/schemas/', '')]) as object), ...rest };
    return Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, inline(value)]));
  };
  return { ...doc, paths: inline((doc as { paths: unknown }).paths) };
}

/** Why an answer is a finding, or undefined when it is fine. */
function finding(res: LightMyRequestResponse): string | undefined {
  if (res.statusCode >= 500) return `${res.statusCode} ${res.body.slice(0, 300)}`;
  if (res.statusCode < 400) return undefined;
  if (!/^application\/problem\+json/.test(String(res.headers['content-type']))) return `${res.statusCode} with content type ${res.headers['content-type']}`;
  const code = (JSON.parse(res.body) as { properties?: { code?: unknown } }).properties?.code;
  return typeof code === 'string' ? undefined : `${res.statusCode} problem without properties.code: ${res.body.slice(0, 300)}`;
}

/** A counterexample for the report; deep nesting is more than JSON.stringify's stack can take. */
function printable(value: unknown): string {
  try {
    return JSON.stringify(value).slice(0, 500);
  } catch {
    return '(nested too deeply to print)';
  }
}

/** Signing out ends the fixture session, and deleting the account its user: they go last. */
const order = (op: Operation) => (op.path.endsWith('/sign-out') || (op.method === 'DELETE' && op.path === '/_svc/me') ? 1 : 0);

describe('fuzzing every operation of the OpenAPI document', () => {
  it('answers every mutated request with a problem (or success), never with a 5xx', async () => {
    const doc = inlineRefs((await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()) as { paths: Record<string, Record<string, Omit<Operation, 'method' | 'path'>>> };
    const operations = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ ...op, method: method.toUpperCase(), path })))
      .sort((a, b) => order(a) - order(b));
    const hints: Hints = { now: () => t.clock.now() };
    const findings: string[] = [];
    const statuses: Record<string, number> = {};

    for (const op of operations) {
      const property = fc.asyncProperty(requestOf(op, hints), mutation, async (valid, m) => {
        const mutated = mutate(valid, m);
        const res = await send(op, mutated);
        statuses[`${String(res.statusCode)[0]}xx`] = (statuses[`${String(res.statusCode)[0]}xx`] ?? 0) + 1;
        const found = finding(res);
        if (found) throw new Error(`${op.method} ${op.path}: ${found}`);
      });
      // One counterexample per operation is enough to act on; shrinking against a database costs the budget.
      const result = await fc.check(property, { seed: SEED, numRuns: RUNS_PER_OPERATION, endOnFailure: true });
      if (result.failed) findings.push(`${(result.errorInstance as Error).message}\n  request: ${printable(result.counterexample)}`);
    }

    const requests = Object.values(statuses).reduce((sum, n) => sum + n, 0);
    console.log(`fuzz: ${operations.length} operations, ${requests} requests, by status class ${JSON.stringify(statuses)}`);
    expect(findings).toEqual([]);
    expect(operations.length).toBeGreaterThan(40);
    expect(requests).toBe(operations.length * RUNS_PER_OPERATION);
    // The valid requests are valid: a generator that drifted from the schemas would only ever get 400s.
    expect(statuses['2xx']).toBeGreaterThan(requests / 5);
  });
});
