import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';

/**
 * A provider whose every answer a test can script, on loopback in the test's process: an OpenID Connect
 * provider (discovery, authorize, token with an ES256 ID token, userinfo, JWKS) and a GitHub-shaped OAuth2
 * server (`/login/oauth/authorize`, `/login/oauth/access_token`, `/user`, `/user/emails`). It checks what a
 * real provider checks (client credentials, the code, the redirect URI, the PKCE verifier), and can be told to
 * misbehave: tamper with the ID token, fail with a status, or not answer at all.
 */

export interface GitHubUser { id: number; login: string; name: string | null; email: string | null }
export interface GitHubEmail { email: string; primary: boolean; verified: boolean }

export interface Script {
  /** Claims of the next ID token (merged over iss, aud, sub, nonce, iat, exp). */
  claims: Record<string, unknown>;
  /** Changes the ID token's claims just before signing: a wrong nonce, audience, issuer or expiry. */
  tamper?: (claims: JWTPayload) => JWTPayload;
  /** How the ID token is signed: the published key, another key, or not at all (`alg: none`). */
  signing: 'published_key' | 'foreign_key' | 'none';
  /** Whether discovery announces the RFC 9207 `iss` parameter (then it is sent on every authorization response). */
  issParameter: boolean;
  /** The `iss` the authorization response carries, when not the issuer (a mix-up). */
  issOverride?: string;
  /** The client authentication methods discovery announces. */
  tokenAuthMethods: string[];
  /** A status the token endpoint answers with instead of tokens, or 'hang' to never answer. */
  tokenFailure?: number | 'hang';
  /** The userinfo (OIDC and plain OAuth2) answer. */
  userInfo: Record<string, unknown>;
  github: { user: GitHubUser; emails: GitHubEmail[] };
}

interface Grant { clientId: string; redirectUri: string; challenge: string | null; nonce: string | null; subject: string | null }

export interface ScriptableProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  script: Script;
  /** The authorization requests received, newest last (to see what the relying party sent). */
  authorizations: URLSearchParams[];
  /** The token requests received, newest last. */
  tokenRequests: URLSearchParams[];
  reset(): void;
  close(): Promise<void>;
}

const defaultScript = (): Script => ({
  claims: { sub: 'subject-1', email: 'person@example.com', email_verified: true, given_name: 'Grace', family_name: 'Hopper', name: 'Grace Hopper' },
  signing: 'published_key', issParameter: true, tokenAuthMethods: ['client_secret_basic', 'client_secret_post'], userInfo: { sub: 'subject-1', email: 'person@example.com', email_verified: true, name: 'Grace Hopper' },
  github: { user: { id: 4242, login: 'octo', name: 'Octo Cat', email: null }, emails: [{ email: 'Octo@Example.com', primary: true, verified: true }] },
});

const readBody = (req: http.IncomingMessage) => new Promise<string>((resolve) => {
  let body = '';
  req.setEncoding('utf8').on('data', (c: string) => { body += c; }).on('end', () => resolve(body));
});

/**
 * `port` and `clientSecret` are fixed by the OAuth bench, which runs the provider as its own process. An
 * authorization request may name its subject with `test_subject`, so concurrent sign-ins can be different people.
 */
export async function startScriptableProvider({ port = 0, clientSecret = randomBytes(16).toString('hex') } = {}): Promise<ScriptableProvider> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const foreign = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const grants = new Map<string, Grant>();
  const accessTokens = new Set<string>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const provider: ScriptableProvider = {
    issuer, clientId: 'client-1', clientSecret,
    script: defaultScript(), authorizations: [], tokenRequests: [],
    reset() { provider.script = defaultScript(); provider.authorizations.length = 0; provider.tokenRequests.length = 0; },
    close: () => new Promise<void>((resolve) => { for (const res of hanging) res.destroy(); server.close(() => resolve()); server.closeAllConnections(); }),
  };
  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

  async function idToken(grant: Grant) {
    const now = Math.floor(Date.now() / 1000);
    let claims: JWTPayload = { iss: issuer, aud: grant.clientId, iat: now, exp: now + 300, ...(grant.nonce && { nonce: grant.nonce }), ...provider.script.claims, ...(grant.subject && { sub: grant.subject }) };
    if (provider.script.tamper) claims = provider.script.tamper(claims);
    if (provider.script.signing === 'none') {
      const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
      return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
    }
    const key = provider.script.signing === 'foreign_key' ? foreign.privateKey : privateKey;
    return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).sign(key);
  }

  function authorize(url: URL, res: http.ServerResponse) {
    provider.authorizations.push(url.searchParams);
    const p = url.searchParams;
    const code = randomBytes(16).toString('hex');
    grants.set(code, { clientId: p.get('client_id')!, redirectUri: p.get('redirect_uri')!, challenge: p.get('code_challenge'), nonce: p.get('nonce'), subject: p.get('test_subject') });
    const back = new URL(p.get('redirect_uri')!);
    back.searchParams.set('code', code);
    back.searchParams.set('state', p.get('state')!);
    if (provider.script.issParameter || provider.script.issOverride) back.searchParams.set('iss', provider.script.issOverride ?? issuer);
    res.writeHead(302, { location: back.href }).end();
  }

  async function token(req: http.IncomingMessage, res: http.ServerResponse, withIdToken: boolean) {
    const form = new URLSearchParams(await readBody(req));
    provider.tokenRequests.push(form);
    const failure = provider.script.tokenFailure;
    if (failure === 'hang') { hanging.add(res); return; }
    if (failure) return json(res, failure, { error: 'server_error' });
    const basic = req.headers.authorization?.startsWith('Basic ')
      ? Buffer.from(req.headers.authorization.slice(6), 'base64').toString().split(':').map(decodeURIComponent) : undefined;
    const [id, secret] = basic ?? [form.get('client_id'), form.get('client_secret')];
    if (id !== provider.clientId || secret !== provider.clientSecret) return json(res, 401, { error: 'invalid_client' });
    const code = form.get('code')!;
    const grant = grants.get(code);
    const verifier = form.get('code_verifier');
    const pkceOk = grant?.challenge ? verifier !== null && createHash('sha256').update(verifier).digest('base64url') === grant.challenge : true;
    grants.delete(code);
    if (!grant || grant.redirectUri !== form.get('redirect_uri') || !pkceOk) return json(res, 400, { error: 'invalid_grant' });
    const accessToken = randomBytes(16).toString('hex');
    accessTokens.add(accessToken);
    return json(res, 200, { access_token: accessToken, token_type: 'bearer', scope: 'openid', ...(withIdToken && { id_token: await idToken(grant) }) });
  }

  const bearerOk = (req: http.IncomingMessage) => accessTokens.has(req.headers.authorization?.replace(/^bearer /i, '') ?? '');

  server.on('request', (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    void (async () => {
      switch (url.pathname) {
        case '/.well-known/openid-configuration':
          return json(res, 200, {
            issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, userinfo_endpoint: `${issuer}/userinfo`,
            jwks_uri: `${issuer}/jwks`, response_types_supported: ['code'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['ES256'],
            token_endpoint_auth_methods_supported: provider.script.tokenAuthMethods, code_challenge_methods_supported: ['S256'],
            authorization_response_iss_parameter_supported: provider.script.issParameter,
          });
        case '/jwks': return json(res, 200, { keys: [jwk] });
        case '/authorize': case '/login/oauth/authorize': return authorize(url, res);
        case '/token': return token(req, res, true);
        case '/login/oauth/access_token': return token(req, res, false);
        case '/userinfo': return bearerOk(req) ? json(res, 200, provider.script.userInfo) : json(res, 401, { error: 'invalid_token' });
        case '/user': return bearerOk(req) ? json(res, 200, provider.script.github.user) : json(res, 401, { message: 'Bad credentials' });
        case '/user/emails': return bearerOk(req) ? json(res, 200, provider.script.github.emails) : json(res, 401, { message: 'Bad credentials' });
        default: return json(res, 404, { error: 'not_found' });
      }
    })();
  });
  return provider;
}

/** Follows the scriptable provider's authorization redirect: the callback URL it sends the browser to. */
export async function authorizeAt(authorizationUrl: URL): Promise<URL> {
  const res = await fetch(authorizationUrl, { redirect: 'manual' });
  if (res.status !== 302) throw new Error(`authorize answered ${res.status}`);
  return new URL(res.headers.get('location')!);
}
