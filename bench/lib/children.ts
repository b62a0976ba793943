import type { ChildProcess } from 'node:child_process';

/** Every child process a bench started and has not stopped yet. */
const live = new Set<ChildProcess>();
/** Children spawned `detached`, leading a process group of their own (npm start: npm, a shell, the server). */
const leaders = new WeakSet<ChildProcess>();

export function track(child: ChildProcess, { group = false } = {}): ChildProcess {
  live.add(child);
  if (group) leaders.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

/** Signals the child, or its whole group when it leads one, so no grandchild outlives the bench. */
function signal(child: ChildProcess, name: NodeJS.Signals) {
  if (!leaders.has(child)) return child.kill(name);
  try {
    process.kill(-child.pid!, name);
  } catch { /* the group is gone */ }
  return true;
}

/** SIGTERM (the servers drain and exit), then SIGKILL after `graceMs`. */
export async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    live.delete(child);
    return;
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  signal(child, 'SIGTERM');
  const timer = setTimeout(() => signal(child, 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  live.delete(child);
}

export async function stopAllChildren(): Promise<void> {
  await Promise.all([...live].map((child) => stopChild(child)));
}

let installed = false;

/** Children die with the bench: on SIGINT/SIGTERM (stopped cleanly) and on any exit (killed). */
export function installCleanup(): void {
  if (installed) return;
  installed = true;
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`\n${signal}: stopping ${live.size} child process(es)`);
    void stopAllChildren().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.on('exit', () => {
    for (const child of live) signal(child, 'SIGKILL');
  });
}
