/**
 * A real OpenID provider (the `oidc-provider` package) for the OAuth tests, run as its own process on
 * loopback: `node --import tsx test/helpers/openid-provider-process.ts` prints `listening <port>`.
 *
 * Relying parties register themselves (dynamic client registration, RFC 7591). The login page is a form
 * with one button; the account it signs in as is the one last set with `POST /test/next-account`
 * (`{sub, email, email_verified, given_name, family_name, name}`), so each test chooses who signs in.
 * PKCE is required for every client, and the authorization response carries `iss` (RFC 9207).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { type Configuration } from 'oidc-provider';

type Claims = { sub: string } & Record<string, unknown>;
const accounts = new Map<string, Claims>();
let nextAccount: Claims = { sub: 'default', email: 'default@example.com', email_verified: true };

const server = http.createServer();
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const configuration: Configuration = {
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
  },
  pkce: { required: () => true },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'given_name', 'family_name', 'groups'] },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: (_ctx, sub) => {
    const claims = accounts.get(sub);
    return claims && { accountId: sub, claims: () => claims };
  },
  cookies: { keys: ['test-only-cookie-key'] },
};
const provider = new Provider(issuer, configuration);
// The relying party is on loopback too: plain http is this test's own network.
provider.proxy = false;
const callback = provider.callback();

const readBody = (req: http.IncomingMessage) => new Promise<string>((resolve, reject) => {
  let body = '';
  req.setEncoding('utf8').on('data', (chunk: string) => { body += chunk; }).on('end', () => resolve(body)).on('error', reject);
});

async function finishLogin(req: http.IncomingMessage, res: http.ServerResponse) {
  const details = await provider.interactionDetails(req, res);
  const account = nextAccount;
  accounts.set(account.sub, account);
  const grant = new provider.Grant({ accountId: account.sub, clientId: String(details.params.client_id) });
  grant.addOIDCScope(String(details.params.scope));
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { login: { accountId: account.sub }, consent: { grantId } }, { mergeWithLastSubmission: false });
}

server.on('request', (req, res) => {
  const url = new URL(req.url ?? '/', issuer);
  const interaction = /^\/interaction\/([\w-]+)(\/login)?$/.exec(url.pathname);
  if (url.pathname === '/test/next-account' && req.method === 'POST') {
    void readBody(req).then((body) => {
      nextAccount = JSON.parse(body) as Claims;
      res.writeHead(204).end();
    });
  } else if (interaction && !interaction[2] && req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'text/html' }).end(
      `<!doctype html><title>Test provider</title><form method="post" action="/interaction/${interaction[1]}/login"><button id="continue">Continue as ${nextAccount.email ?? nextAccount.sub}</button></form>`);
  } else if (interaction?.[2] && req.method === 'POST') {
    void readBody(req).then(() => finishLogin(req, res)).catch((err: Error) => res.writeHead(500).end(err.message));
  } else {
    void callback(req, res);
  }
});

process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
