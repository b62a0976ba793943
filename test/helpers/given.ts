import { randomUUID } from 'node:crypto';
import type { TestApp, TestEnv } from './app.js';

export const PASSWORD = 'correct horse battery staple';

export interface TestUser { id: string; email: string | null; password: string }
export interface TestSession { id: string; token: string; userId: string }

/** Factories that build test data through the public APIs, so tests exercise the real paths. */
export function createGiven(t: TestApp) {
  const given = {
    async environment(settings: Record<string, unknown> = {}, name = `env-${randomUUID().slice(0, 8)}`): Promise<TestEnv> {
      const res = await t.admin.post('/environments', { name, settings });
      if (res.statusCode !== 201) throw new Error(`environment: ${res.statusCode} ${res.body}`);
      const { id, secretKey, frontendHost } = res.json();
      return { id, secretKey, frontendHost, name };
    },
    async user(env: TestEnv, body: Record<string, unknown> = {}): Promise<TestUser> {
      const payload = { email: `user-${randomUUID()}@example.com`, password: PASSWORD, ...body };
      const res = await t.server(env).post('/users', payload);
      if (res.statusCode !== 201) throw new Error(`user: ${res.statusCode} ${res.body}`);
      const user = res.json();
      return { id: user.id, email: user.email, password: payload.password as string };
    },
    /** Signs the user in through the client plane as a native app and returns the bearer session token. */
    async session(env: TestEnv, user: TestUser): Promise<TestSession> {
      const res = await t.client(env).post('/auth/sign-in?_is_native=true', { email: user.email, password: user.password });
      if (res.statusCode !== 200) throw new Error(`session: ${res.statusCode} ${res.body}`);
      const body = res.json();
      return { id: body.session.id, token: body.sessionToken, userId: body.user.id };
    },
  };
  return given;
}
export type Given = ReturnType<typeof createGiven>;

/** Whether a session token still authenticates on the client plane. */
export async function sessionIsActive(t: TestApp, env: TestEnv, session: TestSession): Promise<boolean> {
  const res = await t.client(env, { token: session.token }).get('/me');
  if (res.statusCode !== 200 && res.statusCode !== 401) throw new Error(`unexpected ${res.statusCode} ${res.body}`);
  return res.statusCode === 200;
}
