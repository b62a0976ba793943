import type { FastifyInstance } from 'fastify';

export type MaintenanceTasks = Record<string, () => Promise<unknown>>;

/**
 * Runs housekeeping (pruning spent rate-limit windows and codes) every `intervalMs` while the app is up.
 * Every process may run it: each task is an idempotent delete. A failing task is logged, never thrown.
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
