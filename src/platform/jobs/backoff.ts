export interface Backoff { baseDelayMs: number; maxDelayMs: number }

/**
 * How long to wait after failed attempt number `attempt` (1 for the first): the delay doubles each time
 * up to the cap, and a random half of it is jitter, so the workers of many processes retrying mail to a
 * server that just came back do not all knock at the same moment. `random` is in [0, 1).
 */
export function retryDelayMs(attempt: number, { baseDelayMs, maxDelayMs }: Backoff, random: number = Math.random()): number {
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(ceiling / 2 + (ceiling / 2) * random);
}
