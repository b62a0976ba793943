import { describe, expect, it } from 'vitest';
import { DELIVERY_DEFAULTS } from '../../src/platform/mail/delivery.js';
import { retryDelayMs } from '../../src/platform/jobs/backoff.js';

const BACKOFF = { baseDelayMs: 10_000, maxDelayMs: 3_600_000 };

describe('the retry delay of mail', () => {
  it('doubles with each failed attempt, between half and all of 10 s, 20 s, 40 s, ...', () => {
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(attempt, BACKOFF, 0))).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect([1, 2, 3, 4].map((attempt) => retryDelayMs(attempt, BACKOFF, 1))).toEqual([10_000, 20_000, 40_000, 80_000]);
    expect(retryDelayMs(2, BACKOFF, 0.5)).toBe(15_000);
  });

  it('never waits more than the cap, however many attempts failed', () => {
    expect(retryDelayMs(9, BACKOFF, 1)).toBe(2_560_000);
    expect(retryDelayMs(10, BACKOFF, 1)).toBe(3_600_000);
    expect(retryDelayMs(1_000, BACKOFF, 0)).toBe(1_800_000);
  });

  it('spreads the default attempts over about 6 to 11 hours before giving up, so a night-long SMTP outage loses no mail', () => {
    const waits = (random: number) => Array.from({ length: DELIVERY_DEFAULTS.maxAttempts - 1 }, (_, i) => retryDelayMs(i + 1, DELIVERY_DEFAULTS, random));
    const hours = (ms: number[]) => ms.reduce((a, b) => a + b) / 3_600_000;
    expect(DELIVERY_DEFAULTS.maxAttempts).toBe(20);
    expect(hours(waits(0))).toBeCloseTo(5.71, 2);
    expect(hours(waits(1))).toBeCloseTo(11.42, 2);
  });
});
