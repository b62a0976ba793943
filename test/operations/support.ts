import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { PASSWORD } from '../helpers/given.js';
import { directUrlFor, httpRequest, type HttpResponse, serverEntry, type ServerProcess } from '../helpers/processes.js';

/** Helpers of the backup and restore drills: real server processes, called over HTTP as an operator would. */

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const LANDING = 'https://app.example.com/home';

export interface DrillEnv { id: string; secretKey: string; frontendHost: string }

/** A child process run to its end: exit code and output, whether it succeeded or not. */
export async function runToEnd(command: string, args: string[], env: Record<string, string> = {}) {
  return promisify(execFile)(command, args, { cwd: ROOT, env: { ...withoutGatehouseVariables(), ...env }, maxBuffer: 16 * 1024 * 1024 })
    .then(({ stdout, stderr }) => ({ code: 0, stdout, stderr }), (err: { code: number; stdout: string; stderr: string }) => err);
}

/**
 * `npm start`'s server (src/main.ts) run until it exits by itself, or until it starts serving, which then
 * ends it: a server expected to refuse to start fails the test at once instead of running on.
 */
export function startOrRefuse(env: Record<string, string>): Promise<{ code: number | null; served: boolean; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, serverEntry(), { cwd: ROOT, env: { ...withoutGatehouseVariables(), ...directUrlFor(env), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let served = false;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    if (!served && stderr.includes('Gatehouse listening on')) {
      served = true;
      child.kill('SIGKILL');
    }
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, served, stdout, stderr })));
}

/** The test runner's environment without what would change a server's or the CLI's behaviour. */
export const withoutGatehouseVariables = () => Object.fromEntries(Object.entries(process.env)
  .filter(([k]) => !/^(GATEHOUSE_|DATABASE_URL$|DATABASE_DIRECT_URL$|DATABASE_POOLER$|PORT$|HOST$|LOG_LEVEL$|TEST_DATABASE_URL$)/.test(k)));

/** The body of the expected status, or an error that shows what came back instead. */
export function answered<T = any>(res: HttpResponse, status: number): T {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${res.body}`);
  return res.json();
}

/** The planes of one server process, with the admin token the operator gave it. */
export function planes(server: ServerProcess, adminToken: string) {
  return {
    admin: (method: string, path: string, body?: unknown) =>
      httpRequest(server.port, { method, path: `/api/admin/v1${path}`, headers: { authorization: `Bearer ${adminToken}` }, body }),
    server: (env: DrillEnv, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      httpRequest(server.port, { method, path: `/api/server/v1${path}`, headers: { authorization: `Bearer ${env.secretKey}`, ...headers }, body }),
    client: (env: DrillEnv, method: string, path: string, body?: unknown, token?: string) =>
      httpRequest(server.port, { method, path: `/_svc${path}`, host: env.frontendHost, headers: token ? { authorization: `Bearer ${token}` } : {}, body }),
    call: (path: string, host: string, headers: Record<string, string> = {}) => httpRequest(server.port, { path, host, headers }),
  };
}
export type Planes = ReturnType<typeof planes>;

/** A user with the tests' PASSWORD, signed in: the session token, and a JWT of that session. */
export async function signedInUser(api: Planes, env: DrillEnv) {
  const email = `drill-${randomBytes(6).toString('hex')}@example.com`;
  const user = answered<{ id: string }>(await api.server(env, 'POST', '/users', { email, password: PASSWORD }), 201);
  const { sessionToken } = answered(await api.client(env, 'POST', '/auth/sign-in?_is_native=true', { email, password: PASSWORD }), 200);
  const { token: jwt } = answered(await api.client(env, 'POST', '/sessions/current/token', undefined, sessionToken), 200);
  return { id: user.id, email, sessionToken: sessionToken as string, jwt: jwt as string };
}

/** Signs in with the password, and answers the new session's user. */
export async function signIn(api: Planes, env: DrillEnv, email: string) {
  const res = await api.client(env, 'POST', '/auth/sign-in?_is_native=true', { email, password: PASSWORD });
  expect(res.status).toBe(200);
  const { sessionToken } = res.json();
  return answered<{ id: string }>(await api.client(env, 'GET', '/me', undefined, sessionToken), 200).id;
}
