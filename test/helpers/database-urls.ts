/**
 * Under TEST_PGBOUNCER=1 the suite's PostgreSQL URLs (TEST_DATABASE_URL and every URL made from it) lead
 * to one PgBouncer in transaction mode, and TEST_DATABASE_DIRECT_URL straight to PostgreSQL
 * (test/helpers/global-setup.ts). Without it both are the same server and these helpers change nothing.
 */
export const underPgBouncer = () => Boolean(process.env.TEST_DATABASE_DIRECT_URL && process.env.TEST_DATABASE_URL);

/** The same database and role straight on PostgreSQL, as Gatehouse's DATABASE_DIRECT_URL: `url` itself unless it leads to the suite's pooler. */
export function directUrlOf(url: string): string {
  if (!underPgBouncer()) return url;
  const target = new URL(url);
  if (target.host !== new URL(process.env.TEST_DATABASE_URL!).host) return url;
  target.host = new URL(process.env.TEST_DATABASE_DIRECT_URL!).host;
  return target.toString();
}

/**
 * openDatabase's URLs for `url`, a database of the suite's server, reached through `via` (a proxy in
 * front of it) when given: under TEST_PGBOUNCER LISTEN goes straight to PostgreSQL, the rest through the pooler.
 */
export function databaseUrls(url: string, via: string = url): { url: string; directUrl?: string } {
  return underPgBouncer() ? { url: via, directUrl: directUrlOf(url) } : { url: via };
}

/** A server's or the CLI's database variables for `url`: under TEST_PGBOUNCER DATABASE_DIRECT_URL beside DATABASE_URL. */
export const databaseEnv = (url: string): Record<string, string> =>
  (underPgBouncer() ? { DATABASE_URL: url, DATABASE_DIRECT_URL: directUrlOf(url) } : { DATABASE_URL: url });
