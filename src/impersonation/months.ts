/** UTC calendar months, the period the impersonation quota counts in. */

/** `YYYY-MM` of the instant, in UTC. */
export const monthOf = (now: Date) => now.toISOString().slice(0, 7);

/** The first instant of the next UTC month, when the quota starts over. */
export const nextMonthStart = (now: Date) => new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));

/** Whole seconds until the quota starts over (at least 1), for Retry-After. */
export const secondsToNextMonth = (now: Date) => Math.max(1, Math.ceil((nextMonthStart(now).getTime() - now.getTime()) / 1000));
