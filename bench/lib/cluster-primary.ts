/**
 * The service in BENCH_CLUSTER_PROCESSES processes behind one port, with Node's `cluster`: the primary
 * owns the listening socket and hands each new connection to the next process in turn (round-robin, the
 * default on Linux), so it is the load balancer and serves nothing itself. Run by `startCluster`
 * (server.ts); the worker command is BENCH_CLUSTER_EXEC, a JSON array as `npm start` would run it.
 */
import cluster from 'node:cluster';

const count = Number(process.env.BENCH_CLUSTER_PROCESSES);
const [script, ...reversedFlags] = (JSON.parse(process.env.BENCH_CLUSTER_EXEC!) as string[]).reverse();
cluster.setupPrimary({ exec: script, execArgv: reversedFlags.reverse() });

let listening = 0;
cluster.on('listening', () => {
  if (++listening === count) process.stderr.write(`cluster ready: ${Object.values(cluster.workers!).map((w) => w!.process.pid).join(',')}\n`);
});
cluster.on('exit', (worker, code, signal) => {
  if (!stopping) {
    process.stderr.write(`cluster: process ${worker.process.pid} exited (${code ?? signal})\n`);
    process.exit(1);
  }
});
for (let i = 0; i < count; i++) cluster.fork();

let stopping = false;
process.on('SIGTERM', () => {
  stopping = true;
  for (const worker of Object.values(cluster.workers!)) worker!.process.kill('SIGTERM');
  cluster.on('exit', () => { if (Object.keys(cluster.workers!).length === 0) process.exit(0); });
});
