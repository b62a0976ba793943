import { request } from 'node:http';

export interface HttpResponse {
  status: number;
  text: string;
  json<T = Record<string, unknown>>(): T;
}

/**
 * One HTTP/1.1 request with node:http. Unlike fetch, it lets us set the Host header, which the client
 * plane uses to pick the environment.
 */
export function http(url: string, options: { method?: string; headers?: Record<string, string>; body?: unknown } = {}): Promise<HttpResponse> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = { ...options.headers };
  if (body !== undefined) {
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(Buffer.byteLength(body));
  }
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', headers, timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode ?? 0, text, json: <T>() => JSON.parse(text) as T });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: ${options.method ?? 'GET'} ${url}`)));
    req.on('error', reject);
    req.end(body);
  });
}
