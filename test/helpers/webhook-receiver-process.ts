/**
 * A webhook receiver for the tests, run as its own process on loopback: `node --import tsx
 * test/helpers/webhook-receiver-process.ts` prints `listening <port>`. Every POST outside /test/ is kept
 * (headers and raw body, in arrival order) and answered as the script says: `POST /test/script`
 * `{answers: [200, 500, "hang", ...]}` sets the answers for the next requests, in order; once they are
 * used up, 200. "hang" never answers (the sender's timeout ends it). `GET /test/received` lists what came.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type Answer = number | 'hang';
const received: { path: string; headers: http.IncomingHttpHeaders; body: string; answeredWith: Answer }[] = [];
let script: Answer[] = [];

const server = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    if (request.url === '/test/script') {
      script = (JSON.parse(body) as { answers: Answer[] }).answers;
      return response.writeHead(204).end();
    }
    if (request.url === '/test/received') {
      response.writeHead(200, { 'content-type': 'application/json' });
      return response.end(JSON.stringify(received));
    }
    const answer = script.shift() ?? 200;
    received.push({ path: request.url ?? '/', headers: request.headers, body, answeredWith: answer });
    if (answer === 'hang') return;
    response.writeHead(answer, { 'content-type': 'text/plain' });
    response.end(answer < 300 ? 'thanks' : `failing on purpose with ${answer}`);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
