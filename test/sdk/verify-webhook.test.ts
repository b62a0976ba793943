import { GatehouseError, verifyWebhook, WebhookVerificationError, type GatehouseWebhookEvent } from '@gatehouse/sdk';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { examplePayload } from '../../src/webhooks/catalogue.js';

const SECRET = `whsec_${Buffer.from('a signing secret of 32 bytes....').toString('base64')}`;
const OLD_SECRET = `whsec_${Buffer.from('the previous secret, 32 bytes...').toString('base64')}`;
const BODY = JSON.stringify(examplePayload('user.banned'));
const ID = 'msg_01964c4f5b777086';

/** The headers Gatehouse sends with a delivery signed by each secret given, at `at`. */
function signed(body: string, secrets: string[], at = new Date()) {
  return {
    'webhook-id': ID,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(ID, at, body)).join(' '),
  };
}

/** The WebhookVerificationError `verify` throws, for its code. */
function refusal(verify: () => unknown): WebhookVerificationError {
  try {
    verify();
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookVerificationError);
    return err as WebhookVerificationError;
  }
  throw new Error('the delivery was accepted');
}

describe('verifyWebhook', () => {
  it('answers the parsed event of a delivery signed with the secret', () => {
    const event = verifyWebhook(BODY, signed(BODY, [SECRET]), SECRET);
    expect(event).toEqual(JSON.parse(BODY));
    expect(event.type).toBe('user.banned');
    expect(event.data).toMatchObject({ object: 'user', actor: { type: 'user', impersonatorId: null }, auditEventId: expect.any(String) });
  });

  it('takes the raw body as a Buffer or a Uint8Array', () => {
    const headers = signed(BODY, [SECRET]);
    expect(verifyWebhook(Buffer.from(BODY), headers, SECRET).type).toBe('user.banned');
    expect(verifyWebhook(new TextEncoder().encode(BODY), headers, SECRET).type).toBe('user.banned');
  });

  it('verifies a body with non-ASCII characters given as bytes', () => {
    const body = JSON.stringify({ ...examplePayload('organization.updated'), data: { ...examplePayload('organization.updated').data, metadata: { name: 'Åbenrå Café ☕' } } });
    const event = verifyWebhook(Buffer.from(body, 'utf8'), signed(body, [SECRET]), SECRET);
    expect(event.data.metadata).toEqual({ name: 'Åbenrå Café ☕' });
  });

  it('refuses a tampered body with invalid_signature', () => {
    const headers = signed(BODY, [SECRET]);
    const tampered = BODY.replace('user.banned', 'user.unbanned');
    const err = refusal(() => verifyWebhook(tampered, headers, SECRET));
    expect(err.code).toBe('invalid_signature');
    expect(err.message).toBe('verifyWebhook: No matching signature found');
  });

  it('refuses a body parsed and serialised again (not the raw bytes) when its spacing changed', () => {
    const pretty = JSON.stringify(JSON.parse(BODY), null, 2);
    expect(refusal(() => verifyWebhook(pretty, signed(BODY, [SECRET]), SECRET)).code).toBe('invalid_signature');
  });

  it('refuses a delivery signed with another secret', () => {
    expect(refusal(() => verifyWebhook(BODY, signed(BODY, [OLD_SECRET]), SECRET)).code).toBe('invalid_signature');
  });

  it('refuses a webhook-id other than the one signed', () => {
    const headers = { ...signed(BODY, [SECRET]), 'webhook-id': 'msg_another' };
    expect(refusal(() => verifyWebhook(BODY, headers, SECRET)).code).toBe('invalid_signature');
  });

  it('refuses a timestamp more than 5 minutes old or ahead, even correctly signed', () => {
    const stale = new Date(Date.now() - 6 * 60_000);
    const ahead = new Date(Date.now() + 6 * 60_000);
    expect(refusal(() => verifyWebhook(BODY, signed(BODY, [SECRET], stale), SECRET)).code).toBe('timestamp_out_of_tolerance');
    expect(refusal(() => verifyWebhook(BODY, signed(BODY, [SECRET], ahead), SECRET)).code).toBe('timestamp_out_of_tolerance');
  });

  it('accepts a timestamp 4 minutes old', () => {
    expect(verifyWebhook(BODY, signed(BODY, [SECRET], new Date(Date.now() - 4 * 60_000)), SECRET).type).toBe('user.banned');
  });

  it('refuses a timestamp that is not a number with invalid_timestamp', () => {
    const headers = { ...signed(BODY, [SECRET]), 'webhook-timestamp': 'yesterday' };
    expect(refusal(() => verifyWebhook(BODY, headers, SECRET)).code).toBe('invalid_timestamp');
  });

  it.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])('refuses a delivery without the %s header, naming it', (name) => {
    const headers: Record<string, string> = { ...signed(BODY, [SECRET]) };
    delete headers[name];
    const err = refusal(() => verifyWebhook(BODY, headers, SECRET));
    expect(err.code).toBe('missing_headers');
    expect(err.message).toBe(`verifyWebhook: the ${name} header is missing`);
  });

  it('accepts either secret while a rotation signs with both (new and old)', () => {
    const headers = signed(BODY, [SECRET, OLD_SECRET]);
    expect(headers['webhook-signature']).toMatch(/^v1,\S+ v1,\S+$/);
    expect(verifyWebhook(BODY, headers, SECRET).type).toBe('user.banned');
    expect(verifyWebhook(BODY, headers, OLD_SECRET).type).toBe('user.banned');
    const third = `whsec_${Buffer.from('neither of the two, but 32 bytes').toString('base64')}`;
    expect(refusal(() => verifyWebhook(BODY, headers, third)).code).toBe('invalid_signature');
  });

  it("reads Node's IncomingHttpHeaders, a repeated signature header arriving as an array", () => {
    const one = signed(BODY, [SECRET]);
    const old = signed(BODY, [OLD_SECRET]);
    const headers = {
      'content-type': 'application/json', 'webhook-id': [ID], 'webhook-timestamp': one['webhook-timestamp'],
      'webhook-signature': [old['webhook-signature'], one['webhook-signature']], 'x-absent': undefined,
    };
    expect(verifyWebhook(BODY, headers, SECRET).type).toBe('user.banned');
    expect(verifyWebhook(BODY, headers, OLD_SECRET).type).toBe('user.banned');
  });

  it('reads a Fetch Headers instance and a plain object whatever its keys\' case', () => {
    const headers = signed(BODY, [SECRET]);
    expect(verifyWebhook(BODY, new Headers(headers), SECRET).type).toBe('user.banned');
    const capitalised = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.replace(/\b\w/g, (c) => c.toUpperCase()), v]));
    expect(Object.keys(capitalised)).toEqual(['Webhook-Id', 'Webhook-Timestamp', 'Webhook-Signature']);
    expect(verifyWebhook(BODY, capitalised, SECRET).type).toBe('user.banned');
  });

  it('refuses a correctly signed body that is not a Gatehouse event with invalid_payload', () => {
    for (const body of ['not json', '[]', '{"type":"user.created"}']) {
      expect(refusal(() => verifyWebhook(body, signed(body, [SECRET]), SECRET)).code).toBe('invalid_payload');
    }
  });

  it('throws GatehouseError invalid_option for a missing or malformed secret, not a verification error', () => {
    for (const secret of ['', 'whsec_', 'whsec_not base64!']) {
      let err: unknown;
      try { verifyWebhook(BODY, signed(BODY, [SECRET]), secret); } catch (e) { err = e; }
      expect(err).toBeInstanceOf(GatehouseError);
      expect(err).toMatchObject({ status: 0, code: 'invalid_option' });
    }
  });

  it('answers a union that narrows on type', () => {
    const event: GatehouseWebhookEvent = verifyWebhook(BODY, signed(BODY, [SECRET]), SECRET);
    switch (event.type) {
      case 'user.banned': {
        const type: 'user.banned' = event.type;
        expect(type).toBe('user.banned');
        break;
      }
      default:
        throw new Error(`unexpected ${event.type}`);
    }
  });
});
