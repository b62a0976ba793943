import { hashPassword } from '../../src/platform/crypto/passwords.js';

export interface HashRateResult {
  name: string;
  hashesPerSecond: number;
  hashes: number;
  concurrency: number;
  seconds: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU (all threads of this process) per hash. */
  cpuMsPerHash: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];

/**
 * The raw argon2id rate of this machine, with the service's own parameters (hashPassword from
 * src/platform/crypto/passwords.ts): `concurrency` hashes in flight on the libuv pool for `seconds`.
 * This is the ceiling of any endpoint that verifies or hashes one password per request.
 */
export async function measureHashRate({ seconds, concurrency }: { seconds: number; concurrency: number }): Promise<HashRateResult> {
  await hashPassword('warm-up-password'); // loads the native module
  const latencies: number[] = [];
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let n = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      const t = performance.now();
      await hashPassword(`bench-password-${n++}`);
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  latencies.sort((a, b) => a - b);
  return {
    name: `argon2id hash (concurrency ${concurrency})`,
    hashesPerSecond: latencies.length / elapsed,
    hashes: latencies.length,
    concurrency,
    seconds: elapsed,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    cpuMsPerHash: (cpu.user + cpu.system) / 1000 / Math.max(1, latencies.length),
  };
}
