import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  /** The target URL with its host and port replaced by the proxy's. */
  url: string;
  /** Closes every connection and the proxy, as a crash or a reset partition would. */
  cut(): Promise<void>;
  /** Stops forwarding in both directions and keeps every connection open: a link gone silent, no reset. */
  silence(): void;
  /** Forwards new connections again (the silenced ones stay silent). */
  heal(): void;
}

/** A TCP proxy to a PostgreSQL URL, for the faults a network gives: a cut, or a silence. */
export async function tcpProxy(target: URL): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  let silent = false;
  const server: Server = createServer((inbound) => {
    const outbound = connect(Number(target.port || 5432), target.hostname);
    for (const s of [inbound, outbound]) { sockets.add(s); s.on('close', () => sockets.delete(s)); s.on('error', () => {}); }
    if (silent) return;
    pairs.add([inbound, outbound]);
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.host = `127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url: url.toString(),
    cut: () => new Promise<void>((resolve) => { for (const s of sockets) s.destroy(); server.close(() => resolve()); }),
    silence() {
      silent = true;
      for (const [inbound, outbound] of pairs) {
        inbound.unpipe(outbound);
        outbound.unpipe(inbound);
        inbound.pause();
        outbound.pause();
      }
      pairs.clear();
    },
    heal() { silent = false; },
  };
}
