import { cpus, totalmem } from 'node:os';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Row {
  name: string;
  /** Requests (or hashes) per second. */
  rate: number;
  p50Ms: number;
  p99Ms: number;
  /** Non-2xx responses plus socket errors and timeouts; null where it does not apply. */
  non2xx: number | null;
  /** CPU ms per request of the server process, and of the PostgreSQL backends; null when unknown. */
  serverCpuMs: number | null;
  postgresCpuMs: number | null;
}

export interface Ratio {
  name: string;
  value: number;
  aim: number;
  /** The same ratio estimated from CPU time per request (cheap / costly), robust to a busy machine. */
  cpuValue: number | null;
}

const fmtRate = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtMs = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
const fmtCpu = (n: number | null) => (n === null ? '–' : n >= 10 ? n.toFixed(1) : n.toFixed(2));

/** The machine, for the JSON results. */
export const machineInfo = () => ({ cpus: cpus().length, cpuModel: cpus()[0]?.model, memoryGiB: totalmem() / 2 ** 30, node: process.version });

/** One line naming the machine, printed at the start of every bench. */
export const machineLine = () =>
  `machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}`;

export function markdownTable(rows: Row[]): string {
  const lines = [
    '| Benchmark | Requests/s | p50 ms | p99 ms | Non-2xx | CPU ms/req: server | CPU ms/req: PostgreSQL |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.name} | ${fmtRate(r.rate)} | ${fmtMs(r.p50Ms)} | ${fmtMs(r.p99Ms)} | ${r.non2xx === null ? '–' : r.non2xx} `
      + `| ${fmtCpu(r.serverCpuMs)} | ${fmtCpu(r.postgresCpuMs)} |`),
  ];
  return lines.join('\n');
}

export function markdownRatios(ratios: Ratio[]): string {
  return [
    '| Ratio | Requests/s ratio | Aim | | From CPU/req |',
    '|---|---:|---:|---|---:|',
    ...ratios.map((r) => `| ${r.name} | ${r.value.toFixed(2)} | ≥ ${r.aim.toFixed(2)} | ${r.value >= r.aim ? 'met' : '**below aim**'} `
      + `| ${r.cpuValue === null ? '–' : r.cpuValue.toFixed(2)} |`),
  ].join('\n');
}

/** Writes `<bench>-<timestamp>.json` under BENCH_RESULTS_DIR (default: <os tmpdir>/gatehouse-bench). */
export async function writeResults(bench: string, data: unknown): Promise<string> {
  const dir = process.env.BENCH_RESULTS_DIR || join(tmpdir(), 'gatehouse-bench');
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${bench}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  await writeFile(file, JSON.stringify(data, null, 2) + '\n');
  return file;
}
