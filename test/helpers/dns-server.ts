import DNS from 'dns2';

const { Packet } = DNS;

/**
 * A real DNS server on loopback (UDP), for what the service looks up through GATEHOUSE_DNS_SERVERS. It
 * answers TXT questions from `records` (a name absent there is NXDOMAIN); `mode` makes it fail the way
 * broken DNS does: `servfail` answers SERVFAIL, `silent` never answers.
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

export async function startDnsServer(): Promise<TestDnsServer> {
  const state: Omit<TestDnsServer, 'address' | 'close'> = { records: new Map(), mode: 'answer', questions: 0 };
  const server = DNS.createServer({
    udp: true,
    handle: (request, send) => {
      state.questions++;
      if (state.mode === 'silent') return;
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const values = question && state.records.get(question.name.toLowerCase());
      if (state.mode === 'servfail') response.header.rcode = 2;
      else if (!values) response.header.rcode = 3; // NXDOMAIN
      else if (question.type === Packet.TYPE.TXT) {
        for (const value of values) response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 60, data: value } as DNS.Packet.Resource);
      }
      void send(response);
    },
  });
  const addresses = await server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  return Object.assign(state, {
    address: `127.0.0.1:${addresses.udp!.port}`,
    close: () => server.close(),
  });
}
