import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { sql } from 'kysely';
import { cutSocket, withDeadline } from './pool.js';
import type { Db } from './tables.js';

const HEARTBEAT_MS = 15_000;

/** The one channel on which processes tell each other that cached rows changed. */
export const INVALIDATION_CHANNEL = 'gatehouse_invalidate';

export interface Notifications {
  /**
   * Calls onMessage for each payload on the invalidation channel, and onReset whenever messages may
   * have been missed (the listening connection dropped or came back).
   */
  subscribe(onMessage: (payload: string) => void, onReset: () => void): void;
  /** False while not listening: a cache must not serve from memory then. */
  readonly listening: boolean;
  /** Whether other processes hear these messages too (PostgreSQL), so a writer may wait for its own copy. */
  readonly acrossProcesses: boolean;
  close(): Promise<void>;
}

/** Sends an invalidation; inside a transaction it is delivered at commit, together with the change. */
export const publishInvalidation = (db: Db, payload: string) =>
  sql`select pg_notify(${INVALIDATION_CHANNEL}, ${payload})`.execute(db).then(() => undefined);

/** One process owns the embedded database: every change is made, and evicted, locally. */
export const localNotifications: Notifications = { subscribe: () => {}, listening: true, acrossProcesses: false, close: async () => {} };

/**
 * The embedded database's own NOTIFY, heard in this process: what a trigger queues in a transaction
 * (a webhook delivery, migration 0028) wakes the job worker at commit, as LISTEN does on PostgreSQL.
 */
export function embeddedNotifications(lite: Pick<PGlite, 'listen'>): Notifications {
  const subscribers: ((payload: string) => void)[] = [];
  const stopListening = lite.listen(INVALIDATION_CHANNEL, (payload) => subscribers.forEach((onMessage) => onMessage(payload)));
  return {
    subscribe: (onMessage) => { subscribers.push(onMessage); },
    listening: true,
    acrossProcesses: false,
    close: async () => { await (await stopListening)().catch(() => {}); },
  };
}

/** How long a close waits for the server to see a connection off; a silent link never answers. */
export const CLOSE_DEADLINE_MS = 2000;

/** Ends a client politely, or cuts its socket when the server does not answer in time. */
export async function closeWithin(client: pg.Client, ms: number) {
  await withDeadline(client.end(), ms, 'no answer to the end of the connection')
    .catch(() => cutSocket(client));
}

/** LISTEN on a dedicated PostgreSQL connection, reconnecting with backoff after any failure. */
export function postgresNotifications(url: string): Notifications {
  const subscribers: { onMessage: (p: string) => void; onReset: () => void }[] = [];
  let client: pg.Client | undefined;
  let listening = false;
  let closed = false;
  let retryMs = 250;

  const reset = () => subscribers.forEach((s) => s.onReset());
  const lost = () => {
    if (!listening && client === undefined) return;
    listening = false;
    client?.removeAllListeners();
    client?.end().catch(() => {});
    client = undefined;
    reset();
    if (!closed) setTimeout(connect, retryMs).unref();
    retryMs = Math.min(retryMs * 2, 10_000);
  };
  async function connect() {
    if (closed) return;
    // Keep-alive and a heartbeat notice a half-open connection, which would otherwise listen to nothing.
    // The query deadline makes a heartbeat on a link gone silent fail, and so reconnect, instead of waiting forever.
    const next = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000, keepAlive: true, query_timeout: HEARTBEAT_MS });
    client = next;
    next.on('error', lost);
    next.on('end', lost);
    next.on('notification', (msg) => subscribers.forEach((s) => s.onMessage(msg.payload ?? '')));
    try {
      await next.connect();
      await next.query(`LISTEN ${INVALIDATION_CHANNEL}`);
      listening = true;
      retryMs = 250;
      const heartbeat = setInterval(() => {
        if (client !== next) return clearInterval(heartbeat);
        next.query('select 1').catch(lost);
      }, HEARTBEAT_MS);
      heartbeat.unref();
      reset(); // anything cached before this point may have missed a message
    } catch {
      lost();
    }
  }
  void connect();
  return {
    subscribe: (onMessage, onReset) => { subscribers.push({ onMessage, onReset }); },
    get listening() { return listening; },
    acrossProcesses: true,
    close: async () => {
      closed = true;
      listening = false;
      const current = client;
      client = undefined;
      current?.removeAllListeners();
      if (current) await closeWithin(current, CLOSE_DEADLINE_MS);
    },
  };
}
