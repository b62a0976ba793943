import { sql } from 'kysely';
import type { TestApp } from './app.js';

/**
 * POSTs an environment served on a listening address of this test's own (`localhost:<port>`). On the shared
 * PostgreSQL test database, an earlier file's environment may still hold that host from when the OS gave it
 * the same port; the port is this test's now, so that environment is stale and is moved aside first
 * (instead of a 409 frontend_host_taken that depends on which ports the OS handed out).
 */
export async function postEnvironmentOnOwnHost(t: TestApp, body: { frontendHost: string } & Record<string, unknown>) {
  await t.db.updateTable('environments')
    .set({ frontend_host: sql<string>`'moved-aside-' || id || '.invalid'` })
    .where(sql`lower(frontend_host)`, '=', body.frontendHost.toLowerCase())
    .execute();
  return t.admin.post('/environments', body);
}
