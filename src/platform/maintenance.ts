import type { FastifyInstance } from 'fastify';

export type MaintenanceTasks = Record<string, () => Promise<unknown>>;

/** How often housekeeping runs and how long it keeps what is over (GATEHOUSE_HOUSEKEEPING_* and GATEHOUSE_RETENTION_*). */
export interface Housekeeping {
  intervalSeconds: number;
  /** Sessions are deleted this long after they ended (revoked, or past their absolute expiry). */
  sessionRetentionDays: number;
  /** Delivered and failed mail (its record, the bodies are gone at once) is deleted this long after it was queued. */
  outboxRetentionDays: number;
  /** Finished (done or failed) jobs of the job queue are deleted this long after they finished. */
  jobRetentionDays: number;
  /** Settled webhook deliveries (with their attempts, and events no delivery names) are deleted this long after they settled. */
  webhookRetentionDays: number;
}

export const HOUSEKEEPING_DEFAULTS: Housekeeping = Object.freeze({ intervalSeconds: 600, sessionRetentionDays: 30, outboxRetentionDays: 7, jobRetentionDays: 7, webhookRetentionDays: 30 });

export const DAY_MS = 86_400_000;

declare module 'fastify' {
  interface FastifyInstance {
    /** One housekeeping sweep now, as the interval runs it (tests, instead of waiting for the interval). */
    runHousekeeping(): Promise<void>;
  }
}

/**
 * Runs housekeeping (pruning what is spent or past its retention) every `intervalMs` while the app is up.
 * Every process may run it: each task is an idempotent delete (in batches). A failing task is logged, never thrown.
 */
export function scheduleMaintenance(app: Pick<FastifyInstance, 'addHook' | 'log'>, tasks: MaintenanceTasks, intervalMs = 10 * 60_000) {
  let timer: NodeJS.Timeout | undefined;
  const runAll = async () => {
    for (const [name, task] of Object.entries(tasks)) {
      try {
        await task();
      } catch (err) {
        app.log.warn({ task: name, err: { message: (err as Error).message } }, 'maintenance task failed');
      }
    }
  };
  app.addHook('onReady', async () => {
    timer = setInterval(() => void runAll(), intervalMs);
    timer.unref();
  });
  app.addHook('onClose', async () => clearInterval(timer));
  return runAll;
}
