/** The one source of time. Production uses the system clock; tests move a test clock instead of sleeping. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

export interface TestClock extends Clock {
  set(date: Date | string): void;
  advance(ms: number): void;
}

export function createTestClock(start: Date | string = new Date()): TestClock {
  let current = new Date(start).getTime();
  return {
    now: () => new Date(current),
    set: (date) => { current = new Date(date).getTime(); },
    advance: (ms) => { current += ms; },
  };
}
