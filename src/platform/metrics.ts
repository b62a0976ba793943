import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** How full the database connection pool is (PostgreSQL only; the embedded database has no pool). */
export interface PoolStats { total: number; idle: number; waiting: number }

/**
 * Everything Gatehouse exports to Prometheus, in one registry per app: HTTP requests, the events an
 * operator alerts on (sign-ins, lockouts, refusals by rate limit, mail, audit appends) and process metrics.
 * Services get the counters they bump in their deps; label values are always from a short fixed set.
 */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]) =>
    new Counter<L>({ name, help, labelNames, registers: [registry] });
  const httpLabels = ['method', 'route', 'status_code'] as const;
  return {
    registry,
    httpRequests: counter('http_requests_total', 'HTTP requests', httpLabels),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds', help: 'HTTP request latency', labelNames: httpLabels, registers: [registry],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    }),
    signIns: counter('gatehouse_sign_ins_total', 'Password sign-ins by result: success, failure (wrong password, banned, unverified, locked or unknown)', ['result']),
    lockouts: counter('gatehouse_lockouts_total', 'Accounts locked after repeated wrong passwords', []),
    rateLimited: counter('gatehouse_rate_limited_total', 'Hits refused by a rate limit (429, or a refused code try), by limit', ['limit']),
    mail: counter('gatehouse_mail_total', 'Mail by outcome: queued (written to the outbox), sent, retried (an attempt failed, another is due), failed (given up)', ['outcome']),
    impersonationMints: counter('gatehouse_impersonation_mints_total', 'Impersonation tokens minted (success) or refused for the monthly quota (quota_exhausted)', ['result']),
    impersonationRedeems: counter('gatehouse_impersonation_redeems_total', 'Impersonation redeems by result: success, or the problem code of the refusal (invalid_token, user_not_active, ...)', ['result']),
    oauthSignIns: counter('gatehouse_oauth_sign_ins_total', 'External sign-in callbacks by provider type and result: success, or the error code the browser was sent back with', ['provider_type', 'result']),
    webhookDeliveries: counter('gatehouse_webhook_deliveries_total', 'Webhook delivery attempts by result: succeeded, retried (failed, another attempt is due), failed (given up, refused or the endpoint disabled)', ['result']),
    auditAppends: counter('gatehouse_audit_appends_total', 'Audit event appends answered 201, by outcome: stored, replayed', ['outcome']),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;

/** Gauges of the connection pool, read at each scrape. */
export function watchPool(metrics: Metrics, stats: () => PoolStats) {
  new Gauge({
    name: 'gatehouse_db_pool_connections', help: 'Database pool connections by state: in_use, idle', labelNames: ['state'], registers: [metrics.registry],
    collect() {
      const { total, idle } = stats();
      this.set({ state: 'in_use' }, total - idle);
      this.set({ state: 'idle' }, idle);
    },
  });
  new Gauge({
    name: 'gatehouse_db_pool_waiting', help: 'Queries waiting for a database connection', registers: [metrics.registry],
    collect() { this.set(stats().waiting); },
  });
}

/**
 * Gauges of mail waiting in the outbox, read from the database at each scrape (so every process reports
 * the whole backlog). A scrape while the database is down keeps the last values.
 */
export function watchMailBacklog(metrics: Metrics, backlog: () => Promise<{ pending: number; oldestQueuedAt: Date | null }>, now: () => Date) {
  const read = () => backlog().catch(() => undefined);
  new Gauge({
    name: 'gatehouse_mail_pending', help: 'Mail in the outbox waiting for delivery (SMTP configured)', registers: [metrics.registry],
    async collect() {
      const current = await read();
      if (current) this.set(current.pending);
    },
  });
  new Gauge({
    name: 'gatehouse_mail_oldest_pending_seconds', help: 'Age of the oldest mail waiting for delivery (0 when none): alert when it grows',
    registers: [metrics.registry],
    async collect() {
      const current = await read();
      if (current) this.set(current.oldestQueuedAt ? Math.max(0, (now().getTime() - current.oldestQueuedAt.getTime()) / 1000) : 0);
    },
  });
}

/**
 * Gauges of the job queue (mail, webhooks, data requests) by kind, read from the database at each scrape:
 * how many jobs are queued, and how long the oldest due one has waited. A failed read keeps the last values.
 */
export function watchJobQueue(metrics: Metrics, depth: () => Promise<{ kind: string; queued: number; oldestDueAt: Date }[]>, now: () => Date) {
  let last: { kind: string; queued: number; oldestDueAt: Date }[] | undefined;
  const read = async () => (last = await depth().catch(() => last));
  new Gauge({
    name: 'gatehouse_jobs_queued', help: 'Jobs waiting in the queue (due or not), by kind: mail.deliver, webhook.deliver, data requests', labelNames: ['kind'], registers: [metrics.registry],
    async collect() {
      this.reset();
      for (const row of (await read()) ?? []) this.set({ kind: row.kind }, row.queued);
    },
  });
  new Gauge({
    name: 'gatehouse_jobs_oldest_due_age_seconds', help: 'How long the oldest queued job has been due, by kind (0 when none is due yet)', labelNames: ['kind'], registers: [metrics.registry],
    async collect() {
      this.reset();
      for (const row of (await read()) ?? []) this.set({ kind: row.kind }, Math.max(0, (now().getTime() - row.oldestDueAt.getTime()) / 1000));
    },
  });
}
