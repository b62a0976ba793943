/**
 * How long a test waits for something that is on its way (a server ready, a line printed, a mail
 * delivered, a child process done). Long enough that a busy machine never trips it: only a hang takes
 * this long. Tests never shorten it; what a test asserts about time runs on the test clock.
 */
export const PATIENCE_MS = 120_000;

/**
 * Resolves once some session of the database `locker` is connected to waits on a lock that `locker`
 * holds: proof that a request reached the lock, where a fixed sleep proves nothing on a busy machine.
 */
export async function untilBlockedBy(locker: { query(text: string): Promise<{ rows: { waiting: boolean }[] }> }) {
  const deadline = Date.now() + PATIENCE_MS;
  for (;;) {
    // pg_locks, not pg_stat_activity: inside the locker's transaction the activity view is a snapshot taken
    // at its first read, blind to connections opened after it; the lock table is read live.
    const { rows: [row] } = await locker.query('select exists (select from pg_locks where not granted and pg_backend_pid() = any(pg_blocking_pids(pid))) as waiting');
    if (row!.waiting) return;
    if (Date.now() > deadline) throw new Error(`nothing waited on the lock within ${PATIENCE_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
