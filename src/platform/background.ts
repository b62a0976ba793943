import type { FastifyBaseLogger } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** Resolves once the work started after an answer (`Background.run`) has finished. */
    settled(): Promise<void>;
  }
}

/**
 * Work a request starts and does not wait for: what a refusal leaves behind where the answer must not
 * take longer for an account that exists than for one that does not (enumeration by timing). A failure
 * is logged, never thrown; the app waits for what is in flight before it closes.
 */
export function createBackground(log: FastifyBaseLogger) {
  const inFlight = new Set<Promise<void>>();
  return {
    run(task: string, work: () => Promise<unknown>) {
      // After the answer: setImmediate runs once the reply is written, so even an in-process database
      // (PGlite, on this thread) starts the work only then.
      const running: Promise<void> = new Promise((resolve) => setImmediate(resolve)).then(work).then(() => {}, (err: unknown) => {
        log.error({ task, err: { message: (err as Error).message } }, 'background work failed');
      }).finally(() => inFlight.delete(running));
      inFlight.add(running);
    },
    async settled() {
      while (inFlight.size > 0) await Promise.all(inFlight);
    },
  };
}
export type Background = Pick<ReturnType<typeof createBackground>, 'run'>;
