import type { FastifyBaseLogger } from 'fastify';

/** One part of a shutdown: what the log calls it, and how it closes. */
export type ClosingStep = readonly [name: string, close: () => Promise<unknown>];

/**
 * Closes each part in order, going on past one that fails so the later ones (the database, the data
 * directory's lock) still close. A failure is logged with its part's name; the exit code says whether any failed.
 */
export async function closeInOrder(log: Pick<FastifyBaseLogger, 'error'>, steps: readonly ClosingStep[]): Promise<0 | 1> {
  let code: 0 | 1 = 0;
  for (const [name, close] of steps) {
    try {
      await close();
    } catch (err) {
      code = 1;
      log.error({ err: { message: (err as Error).message }, step: name }, 'shutdown: a part did not close cleanly');
    }
  }
  return code;
}
