import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from './clock.js';
import type { Notifications } from './db/notifications.js';

// Past a look that found nothing while something was due (taken by another process), look again soon, not at once.
const MIN_SLEEP_MS = 100;

export interface WakeLoopDeps {
  clock: Clock;
  log: FastifyBaseLogger;
  /** Does every piece of work due now; reads `stopped()` to end early. */
  drain(): Promise<unknown>;
  /** When the next piece of work is due, if any is waiting. */
  nextDueAt(): Promise<Date | undefined>;
  /** The longest the loop sleeps before looking again. */
  pollIntervalMs: number;
  /** What the log says when a drain fails (the loop goes on). */
  drainFailure: string;
  /** Wakes the loop when another process queued work: this NOTIFY payload, or a reconnect. */
  notifications?: Notifications;
  queuedMessage: string;
}

/**
 * The loop of a durable worker (the job queue's): it drains every due piece of work, then
 * sleeps until the next is due (at most pollIntervalMs); work queued by this process (wake) or another
 * (NOTIFY) wakes it sooner, and a wake during a drain drains again. Its timers never keep the process
 * alive; stop() lets the drain in flight finish.
 */
export function createWakeLoop({ clock, log, drain, nextDueAt, pollIntervalMs, drainFailure, notifications, queuedMessage }: WakeLoopDeps) {
  let stopped = true;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  let wokenWhileRunning = false;

  async function sleepMs() {
    const next = await nextDueAt().catch(() => undefined);
    const due = next ? next.getTime() - clock.now().getTime() : pollIntervalMs;
    return Math.min(pollIntervalMs, Math.max(MIN_SLEEP_MS, due));
  }

  async function cycle() {
    for (;;) {
      wokenWhileRunning = false;
      await drain().catch((err: unknown) => log.warn({ err: { message: (err as Error).message } }, drainFailure));
      if (stopped) return;
      if (wokenWhileRunning) continue;
      const ms = await sleepMs();
      if (stopped) return;
      if (wokenWhileRunning) continue;
      timer = setTimeout(wake, ms);
      timer.unref();
      return;
    }
  }

  function wake() {
    if (stopped) return;
    if (running) {
      wokenWhileRunning = true;
      return;
    }
    clearTimeout(timer);
    running = cycle().finally(() => { running = undefined; });
  }

  notifications?.subscribe((payload) => { if (payload === queuedMessage) wake(); }, wake);

  return {
    stopped: () => stopped,
    start() {
      stopped = false;
      wake();
    },
    /** Looks for due work now (after this process queued some). */
    wake,
    /** Runs `work` once the loop's drain in flight is over, as the loop's own run; a wake meanwhile drains after it. */
    async runExclusive<T>(work: () => Promise<T>): Promise<T> {
      while (running) await running;
      const done = work();
      running = done.finally(() => { running = undefined; });
      const result = await done;
      if (wokenWhileRunning) wake();
      return result;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      while (running) await running;
    },
  };
}
