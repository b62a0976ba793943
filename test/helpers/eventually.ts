import { vi } from 'vitest';
import { PATIENCE_MS } from './patience.js';

/**
 * vi.waitFor with PATIENCE_MS for its bound: vitest's own default (one second) is a fixed limit that a busy
 * machine trips.
 */
export function eventually<T>(check: () => T | Promise<T>, options: { interval?: number } = {}): Promise<T> {
  return vi.waitFor(check, { timeout: PATIENCE_MS, interval: options.interval ?? 50 });
}
