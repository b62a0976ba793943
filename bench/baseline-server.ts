/**
 * The reference ceiling for read endpoints: a bare Fastify 5 + `pg` server that answers
 * GET /users/:id with one primary-key SELECT on the same `users` table, no auth, no schemas, no logging.
 * `BASELINE_PREPARED=1` sends it as a named (prepared) statement, as Gatehouse's GET user does; otherwise
 * as the unnamed statement a bare server writes (`pool.query(text, values)`), planned on every request.
 * Started by the users bench; by hand:
 *   DATABASE_URL=postgres://... BASELINE_ENVIRONMENT_ID=<uuid> PORT=4100 npx tsx bench/baseline-server.ts
 */
import Fastify from 'fastify';
import pg from 'pg';

const url = process.env.DATABASE_URL;
const environmentId = process.env.BASELINE_ENVIRONMENT_ID;
if (!url || !environmentId) {
  console.error('DATABASE_URL and BASELINE_ENVIRONMENT_ID are required');
  process.exit(2);
}
// Same pool size as Gatehouse's PostgreSQL pool (src/platform/db/database.ts), so the ceiling is comparable.
const prepared = process.env.BASELINE_PREPARED === '1';
const pool = new pg.Pool({ connectionString: url, max: Number(process.env.BASELINE_POOL_SIZE ?? 10) });
pool.on('error', () => {});

const app = Fastify({ logger: false });
app.get('/readyz', async () => {
  await pool.query('select 1');
  return { status: 'ready' };
});
app.get<{ Params: { id: string } }>('/users/:id', async (req, reply) => {
  const { rows } = await pool.query({ ...(prepared && { name: 'user_by_id' }), text: 'SELECT * FROM users WHERE environment_id = $1 AND id = $2', values: [environmentId, req.params.id] });
  if (rows.length === 0) return reply.code(404).send({ error: 'not found' });
  return rows[0];
});

const shutdown = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.on('SIGTERM', () => void shutdown());
process.on('SIGINT', () => void shutdown());

await app.listen({ port: Number(process.env.PORT ?? 4100), host: process.env.HOST ?? '127.0.0.1' });
