import { createServer } from 'node:net';

// Below Linux's ephemeral range (32768-60999 by default). A port the OS picks for bind(0) comes from that
// range, which every outgoing connection also draws its local port from: on a busy machine a database
// connection could take the port between our probe and the child's listen, and the child would refuse to
// start with EADDRINUSE.
const LOWEST = 20_000;
const COUNT = 12_000;

const canListen = (port: number) => new Promise<boolean>((resolve) => {
  const probe = createServer();
  probe.once('error', () => resolve(false));
  probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
});

/** A port that was free a moment ago, for a child process to listen on. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = LOWEST + Math.floor(Math.random() * COUNT);
    if (await canListen(port)) return port;
  }
}
