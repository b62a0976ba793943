/**
 * The audit append limit counts attempts per environment and UTC minute. A measured load must not meet
 * it (the bench measures appends, not 429s), so before each measured load the bench waits for a fresh
 * minute unless what is left of this minute's windows holds the load at the fastest rate we expect.
 * With the default 10 s loads that is a wait before every load; short verification runs share minutes.
 */

const minuteOf = (ms: number) => Math.floor(ms / 60_000);

/** Sleeps until just after the next UTC minute starts. */
export const nextMinute = () => new Promise((resolve) => setTimeout(resolve, 60_000 - (Date.now() % 60_000) + 100));

/**
 * `capacity`: attempts a minute over all environments (requests go round-robin, so they spread evenly);
 * `ceilingPerSecond`: the fastest the loads are expected to go.
 */
export function minuteBudget(capacity: number, ceilingPerSecond: number) {
  let minute = minuteOf(Date.now());
  let used = 0;
  const roll = () => {
    const now = minuteOf(Date.now());
    if (now !== minute) {
      minute = now;
      used = 0;
    }
  };
  return {
    /** One attempt sent (call from the load's `next`). */
    count() {
      roll();
      used++;
    },
    /** Before a measured load of `seconds`: waits for a fresh minute when this one cannot hold it. */
    async ensure(seconds: number) {
      roll();
      const secondsLeft = 60 - (Date.now() % 60_000) / 1000;
      // What spills over into the next minute starts a fresh window there.
      const needed = Math.min(seconds, secondsLeft) * ceilingPerSecond;
      if (used + needed <= capacity) return;
      await nextMinute();
      roll();
    },
  };
}
