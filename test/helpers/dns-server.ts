import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import * as packet from 'dns-packet';

/**
 * A real DNS server on loopback (UDP, messages encoded by dns-packet), for what the service looks up through
 * GATEHOUSE_DNS_SERVERS. It answers TXT questions from `records` (a name absent there is NXDOMAIN); `mode`
 * makes it fail the way broken DNS does: `servfail` answers SERVFAIL, `silent` never answers.
 */
export interface TestDnsServer {
  /** `127.0.0.1:<port>`, as GATEHOUSE_DNS_SERVERS takes it. */
  address: string;
  records: Map<string, string[]>;
  mode: 'answer' | 'servfail' | 'silent';
  /** How many questions arrived, to prove a lookup happened (or did not). */
  questions: number;
  close(): Promise<void>;
}

const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3 };

export async function startDnsServer(): Promise<TestDnsServer> {
  const socket = createSocket('udp4');
  const server: TestDnsServer = {
    address: '', records: new Map(), mode: 'answer', questions: 0,
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
  socket.on('message', (message, peer) => {
    server.questions++;
    if (server.mode === 'silent') return;
    const query = packet.decode(message);
    const [question] = query.questions ?? [];
    const values = question && server.records.get(question.name.toLowerCase());
    let rcode = values ? RCODE.NOERROR : RCODE.NXDOMAIN;
    if (server.mode === 'servfail') rcode = RCODE.SERVFAIL;
    const answers = rcode === RCODE.NOERROR && question?.type === 'TXT'
      ? values!.map((value) => ({ type: 'TXT' as const, name: question.name, ttl: 60, data: value }))
      : [];
    const response = packet.encode({
      type: 'response', id: query.id, flags: packet.AUTHORITATIVE_ANSWER | packet.RECURSION_DESIRED | rcode, questions: query.questions, answers,
    });
    socket.send(response, peer.port, peer.address);
  });
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  server.address = `127.0.0.1:${socket.address().port}`;
  return server;
}
