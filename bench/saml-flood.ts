/**
 * `npm run bench -- saml-flood` (issue 42): what an unsigned SAMLResponse padded with empty sibling elements
 * costs the compiled server on real PostgreSQL, and what it costs everyone else. Before the fix, 20,000
 * siblings (118 KB) held the event loop for 19 s. One client posts the padded response to a SAML
 * connection's ACS back to back (answering a live request, as the audit's did) while two others call
 * `/healthz` and a Server API read (`GET /organizations/:id`) in a loop; each round measures the probes alone,
 * then beside 20,000-sibling posts, then beside 60,000-sibling ones (in alternating order). Aims: every post
 * refused (400) in under 100 ms, and each probe's p99 within 50 ms of its p99 alone. Also reported: the
 * same attack just within the limits (src/sso/xml-limits.ts: its padding in wrappers of a thousand, with
 * made-up signatures), the most one post can still cost.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { inflateRawSync } from 'node:zlib';
import { beyondXmlLimits, SAML_RESPONSE_LIMITS } from '../src/sso/xml-limits.js';
import { startSamlIdp } from '../test/helpers/saml-idp.js';
import { BENCH_ENCRYPTION_KEY, envNumber, expectStatus } from './lib/config.js';
import { recreateDatabase, redact } from './lib/db.js';
import { http } from './lib/http.js';
import { machineInfo, machineLine, writeResults } from './lib/report.js';
import { interleaved, roundsFromEnv, statsOf } from './lib/rounds.js';
import { startServer, type RunningServer } from './lib/server.js';
import type { SummaryEntry } from './lib/summary.js';
import { entryFromStats } from './lib/summary.js';
import { percentile } from './lib/timed-load.js';

export const description = 'SAML parse flood (issue 42): padded SAMLResponses refused in ms, /healthz and a Server API read unmoved';

const LANDING = 'https://app.bench.example.com/home';
const LOADS = ['quiet', 'flood-20000', 'flood-60000'] as const;
type Load = typeof LOADS[number];
const SIBLINGS: Record<Load, number> = { quiet: 0, 'flood-20000': 20_000, 'flood-60000': 60_000 };

function readConfig() {
  return {
    databaseUrl: process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/gatehouse_bench_saml_flood',
    durationSeconds: envNumber('BENCH_DURATION', 5, 1),
    rounds: roundsFromEnv(),
  };
}

/** One request, the body drained: its status and how long it took, in ms. */
function timed(url: string, { method = 'GET', headers = {}, body }: { method?: string; headers?: Record<string, string>; body?: string } = {}) {
  const started = performance.now();
  return new Promise<{ status: number; ms: number }>((resolve, reject) => {
    const req = request(url, { method, headers: { ...headers, ...(body !== undefined && { 'content-length': String(Buffer.byteLength(body)) }) } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The response with `count` empty elements as siblings of its Assertion, as the audit padded it. */
function padded(xml: string, count: number) {
  const at = xml.indexOf('<samlp:Status>');
  return `${xml.slice(0, at)}${'<p/>'.repeat(count)}${xml.slice(at)}`;
}

/** The response with `count` empty elements in wrappers of a thousand (the most children an element may have) beside its Assertion. */
function paddedInThousands(xml: string, count: number) {
  const groups = Array.from({ length: Math.ceil(count / 1_000) }, (_, g) => `<g>${'<p/>'.repeat(Math.min(1_000, count - g * 1_000))}</g>`);
  const at = xml.indexOf('<samlp:Status>');
  return `${xml.slice(0, at)}${groups.join('')}${xml.slice(at)}`;
}

/**
 * A Signature of the shape node-saml and xml-crypto check (its digest and value are made up) on the Response
 * and on the Assertion: they look the referenced element up through the whole document, several times per
 * signature and certificate, before the digest fails. The costliest refusal left to an attacker.
 */
function withMadeUpSignatures(xml: string) {
  const signature = (id: string) => '<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo>'
    + '<ds:CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/><ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>'
    + `<ds:Reference URI="#${id}"><ds:Transforms><ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>`
    + '<ds:Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"/></ds:Transforms><ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>'
    + '<ds:DigestValue>AAAA</ds:DigestValue></ds:Reference></ds:SignedInfo><ds:SignatureValue>AAAA</ds:SignatureValue></ds:Signature>';
  const [responseIssuerEnd, assertionIssuerEnd] = [...xml.matchAll(/<\/saml:Issuer>/g)].map((m) => m.index! + m[0].length);
  const responseId = /<samlp:Response [^>]*\bID="([^"]+)"/.exec(xml)![1]!;
  const assertionId = /<saml:Assertion [^>]*\bID="([^"]+)"/.exec(xml)![1]!;
  return xml.slice(0, responseIssuerEnd) + signature(responseId) + xml.slice(responseIssuerEnd, assertionIssuerEnd) + signature(assertionId) + xml.slice(assertionIssuerEnd);
}

/** The most padding the limits let through to node-saml: the costliest post an attacker has left. */
function mostPaddingWithin(xml: string) {
  let count = SAML_RESPONSE_LIMITS.nodes;
  while (beyondXmlLimits(paddedInThousands(xml, count))) count -= 10;
  return count;
}

const formBody = (xml: string) => new URLSearchParams({ SAMLResponse: Buffer.from(xml).toString('base64'), RelayState: '' }).toString();

/** Calls `send` back to back until `until`, keeping each answer. */
async function loop(until: number, send: () => Promise<{ status: number; ms: number }>) {
  const answers: { status: number; ms: number }[] = [];
  while (performance.now() < until) answers.push(await send());
  return answers;
}

const p99 = (answers: { ms: number }[]) => percentile(answers.map((a) => a.ms).sort((a, b) => a - b), 99);

export async function run(): Promise<SummaryEntry[]> {
  const config = readConfig();
  const started = new Date();
  console.log(`saml-flood bench: ${config.rounds} rounds of ${config.durationSeconds} s per load, database ${redact(config.databaseUrl)}`);
  console.log(machineLine());
  await recreateDatabase(config.databaseUrl);
  const adminToken = randomBytes(24).toString('hex');
  const idp = await startSamlIdp();
  let gatehouse: RunningServer | undefined;
  try {
    gatehouse = await startServer({
      name: 'gatehouse', script: 'src/main.ts',
      env: { DATABASE_URL: config.databaseUrl, GATEHOUSE_ADMIN_TOKEN: adminToken, LOG_LEVEL: 'error', GATEHOUSE_ENCRYPTION_KEY: BENCH_ENCRYPTION_KEY },
    });
    const url = gatehouse.url;
    const env = expectStatus<{ secretKey: string; frontendHost: string }>('create environment', await http(`${url}/api/admin/v1/environments`, {
      method: 'POST', headers: { authorization: `Bearer ${adminToken}` }, body: { name: 'saml-flood-bench' },
    }), 201);
    const server = { authorization: `Bearer ${env.secretKey}` };
    expectStatus('allowed origins', await http(`${url}/api/server/v1/allowed-origins`, { method: 'PUT', headers: server, body: { origins: [new URL(LANDING).origin] } }), 200);
    const org = expectStatus<{ id: string }>('create organization', await http(`${url}/api/server/v1/organizations`, { method: 'POST', headers: server, body: { name: 'Acme' } }), 201);
    const connection = expectStatus<{ id: string; acsUrl: string; spEntityId: string }>('create connection', await http(`${url}/api/server/v1/organizations/${org.id}/sso-connections`, {
      method: 'POST', headers: server, body: { type: 'saml', name: 'Acme IdP', idpMetadataXml: idp.metadataXml },
    }), 201);
    const host = env.frontendHost;

    // A live request for the posts to answer, as anyone gets one: the redirect of authorize carries its ID (and the connection's).
    const authorize = await new Promise<string>((resolve, reject) => {
      request(`${url}/_svc/auth/sso/authorize?organization_id=${org.id}&redirect_url=${encodeURIComponent(LANDING)}`, { headers: { host } }, (res) => {
        res.resume();
        if (res.statusCode !== 302) reject(new Error(`authorize answered ${res.statusCode}`));
        else resolve(res.headers.location!);
      }).on('error', reject).end();
    });
    const authnRequest = inflateRawSync(Buffer.from(new URL(authorize).searchParams.get('SAMLRequest')!, 'base64')).toString('utf8');
    const requestId = /\sID="([^"]+)"/.exec(authnRequest)![1]!;
    const unsigned = Buffer.from(await idp.response({
      acsUrl: connection.acsUrl, audience: connection.spEntityId, inResponseTo: requestId, user: { nameId: 'anyone@acme.example' }, variant: 'unsigned',
    }), 'base64').toString('utf8');

    const acs = `${url}/_svc/auth/sso/${connection.id}/acs`;
    const post = (body: string) => timed(acs, { method: 'POST', headers: { host, 'content-type': 'application/x-www-form-urlencoded', origin: 'https://idp.acme.example' }, body });
    const healthz = () => timed(`${url}/healthz`);
    const serverRead = () => timed(`${url}/api/server/v1/organizations/${org.id}`, { headers: server });
    const bodies: Record<Load, string> = { quiet: '', 'flood-20000': formBody(padded(unsigned, 20_000)), 'flood-60000': formBody(padded(unsigned, 60_000)) };

    const results = await interleaved(LOADS, config.rounds, async (load) => {
      const until = performance.now() + config.durationSeconds * 1000;
      const [posts, health, reads] = await Promise.all([
        load === 'quiet' ? Promise.resolve([]) : loop(until, () => post(bodies[load])),
        loop(until, healthz),
        loop(until, serverRead),
      ]);
      const figures = {
        posts: posts.length, postsRefused: posts.filter((p) => p.status === 400).length, postP50Ms: percentile(posts.map((p) => p.ms).sort((a, b) => a - b), 50),
        postP99Ms: p99(posts), postMaxMs: Math.max(...posts.map((p) => p.ms)), healthzP99Ms: p99(health), serverReadP99Ms: p99(reads),
        probeFailures: [...health, ...reads].filter((a) => a.status !== 200).length, probes: health.length + reads.length,
      };
      console.log(`  ${load} (${SIBLINGS[load].toLocaleString('en-US')} siblings): ${posts.length ? `${figures.postsRefused}/${posts.length} posts refused, p50 ${figures.postP50Ms.toFixed(1)} ms, `
        + `p99 ${figures.postP99Ms.toFixed(1)} ms, max ${figures.postMaxMs.toFixed(1)} ms; ` : ''}/healthz p99 ${figures.healthzP99Ms.toFixed(1)} ms, `
        + `Server API read p99 ${figures.serverReadP99Ms.toFixed(1)} ms (${figures.probes} probes, ${figures.probeFailures} failed)`);
      return figures;
    });

    // The same attack at the limits' edge: what a post that is let through to node-saml can still cost.
    const signed = withMadeUpSignatures(unsigned);
    const edge = mostPaddingWithin(signed);
    const edgeBody = formBody(paddedInThousands(signed, edge));
    const edgePosts = [];
    for (let i = 0; i < 20; i++) edgePosts.push(await post(edgeBody));
    const edgeMs = statsOf(edgePosts.map((p) => p.ms));
    console.log(`  ${edge.toLocaleString('en-US')} padding elements in thousands and made-up signatures (the most within the limits): ${edgePosts.filter((p) => p.status === 400).length}/20 refused, `
      + `median ${edgeMs.median.toFixed(1)} ms, max ${edgeMs.max.toFixed(1)} ms`);

    const failures = Object.values(results).flat().reduce((n, r) => n + r.probeFailures + (r.posts - r.postsRefused), 0);
    const file = await writeResults('saml-flood', { startedAt: started.toISOString(), machine: machineInfo(), config, results, edge: { siblings: edge, ms: edgeMs } });
    console.log(`JSON: ${file}`);
    if (failures > 0) throw new Error(`${failures} probes failed or posts were not refused with 400`);

    const delta = (load: Load, figure: 'healthzP99Ms' | 'serverReadP99Ms') => statsOf(results[load].map((r, round) => r[figure] - results.quiet[round]![figure]));
    return (['flood-20000', 'flood-60000'] as const).flatMap((load) => {
      const siblings = SIBLINGS[load].toLocaleString('en-US');
      return [
        entryFromStats(`${siblings}-sibling post refused, slowest of the round`, statsOf(results[load].map((r) => r.postMaxMs)), 'ms', { op: '<=', value: 100 },
          `p99 ${statsOf(results[load].map((r) => r.postP99Ms)).median.toFixed(1)} ms`),
        entryFromStats(`/healthz p99 beside ${siblings}-sibling posts, minus alone`, delta(load, 'healthzP99Ms'), 'ms', { op: '<=', value: 50 }),
        entryFromStats(`Server API read p99 beside ${siblings}-sibling posts, minus alone`, delta(load, 'serverReadP99Ms'), 'ms', { op: '<=', value: 50 }),
      ];
    }).concat([{
      name: `post padded with ${edge.toLocaleString('en-US')} elements in thousands, made-up signatures (the most within the limits), median`, value: edgeMs.median, unit: 'ms', aim: { op: '>=', value: 0 },
      spread: { min: edgeMs.min, max: edgeMs.max }, note: 'no aim: what a post the limits let through to node-saml costs',
    }]);
  } finally {
    await gatehouse?.stop();
    await idp.stop();
  }
}
