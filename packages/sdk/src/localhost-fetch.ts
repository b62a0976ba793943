/**
 * `fetch`, except that in Node a host under `.localhost` is reached on loopback. Browsers and curl resolve
 * `*.localhost` to loopback (RFC 6761), and Gatehouse gives every environment but `development` such a
 * frontend host by default (`staging.localhost:3000`), but Node asks the system resolver, which (glibc
 * without nss-myhostname) answers ENOTFOUND. Node's fetch drops a `Host` header, so the request cannot be
 * sent to 127.0.0.1 under the right name; `node:http` with a `lookup` that resolves `localhost` instead
 * can. Everything else, and every browser, goes through the global fetch untouched. The Node modules are
 * loaded with `process.getBuiltinModule` (Node 20.16+), which bundlers never follow into a browser build.
 */

interface IncomingLike extends AsyncIterable<Uint8Array> {
  statusCode?: number;
  headers: Record<string, string | string[] | undefined>;
}
interface RequestLike { on(event: 'error', listener: (err: Error) => void): unknown; end(body?: Uint8Array): void }
type LookupCallback = (err: Error | null, address: string | { address: string; family: number }[], family?: number) => void;
interface HttpLike {
  request(url: URL, options: { method: string; headers: Record<string, string>; signal?: AbortSignal; lookup: (hostname: string, options: object, callback: LookupCallback) => void; servername?: string },
    callback: (response: IncomingLike) => void): RequestLike;
}
interface DnsLike { lookup(hostname: string, options: object, callback: LookupCallback): void }
interface NodeProcess { versions?: { node?: string }; getBuiltinModule?: (id: string) => unknown }

const nodeProcess = () => (globalThis as { process?: NodeProcess }).process;

/** Whether a request to this URL needs the loopback path: Node (with getBuiltinModule) and a `*.localhost` host. */
export function needsLoopback(url: URL): boolean {
  const proc = nodeProcess();
  return url.hostname.endsWith('.localhost') && typeof proc?.versions?.node === 'string' && typeof proc.getBuiltinModule === 'function';
}

/** Statuses whose responses have no body (a `Response` with one throws). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

async function viaLoopback(request: Request): Promise<Response> {
  const builtin = nodeProcess()!.getBuiltinModule!;
  const url = new URL(request.url);
  const http = builtin(url.protocol === 'https:' ? 'node:https' : 'node:http') as HttpLike;
  const dns = builtin('node:dns') as DnsLike;
  const body = request.body ? new Uint8Array(await request.arrayBuffer()) : undefined;
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => { headers[name] = value; });
  const response = await new Promise<IncomingLike>((resolve, reject) => {
    const outgoing = http.request(url, {
      method: request.method, headers, signal: request.signal,
      // Whatever `localhost` resolves to here (127.0.0.1 or ::1), as a server listening on localhost binds it.
      lookup: (_hostname, options, callback) => dns.lookup('localhost', options, callback),
      ...(url.protocol === 'https:' && { servername: url.hostname }),
    }, resolve);
    outgoing.on('error', (err) => reject(new TypeError('fetch failed', { cause: err })));
    outgoing.end(body);
  });
  const chunks: Uint8Array[] = [];
  for await (const chunk of response) chunks.push(chunk);
  const status = response.statusCode ?? 500;
  const answer = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) answer.append(name, one);
  }
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  chunks.reduce((offset, c) => { bytes.set(c, offset); return offset + c.length; }, 0);
  return new Response(NULL_BODY.has(status) ? null : bytes, { status, headers: answer });
}

/** The global fetch, or, in Node for a `*.localhost` URL, the same request sent on loopback. */
export const localhostFetch: typeof fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  return needsLoopback(url) ? viaLoopback(new Request(input, init)) : globalThis.fetch(input, init);
};
