import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RefusedTarget } from '../../src/platform/net/outbound.js';
import { createWebhookSender, refusal, WEBHOOK_SENDER_DEFAULTS } from '../../src/webhooks/target.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { givenEndpoint } from './given-endpoint.js';

describe('where a webhook delivery may go (contract §3d)', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => { receiver = await startWebhookReceiver(); });
  afterAll(() => receiver.stop());

  it('never allows link-local or cloud-metadata addresses; loopback and private networks only when allowed', () => {
    for (const address of ['169.254.169.254', 'fe80::1', '::ffff:169.254.169.254', '100.100.100.200', 'fd00:ec2::254', '::169.254.169.254', '64:ff9b::a9fe:a9fe',
      '64:ff9b:1::a9fe:a9fe', '2002:a9fe:a9fe::1', '::ffff:0:a9fe:a9fe', '2001:0:4136:e378:8000:63bf:5601:5601']) {
      expect([address, refusal(address, 'allow')]).toEqual([address, expect.stringContaining('never a webhook target')]);
    }
    for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '::1', 'fc00::1', 'fd12::1', '0.0.0.0', '::ffff:127.0.0.1',
      '::ffff:7f00:1', '100.64.0.1', '::127.0.0.1', '64:ff9b::a00:1', '64:ff9b:1::5db8:d822', '2002:a00:1::1', '::ffff:0:7f00:1', '2001:0:4136:e378:8000:63bf:3f57:fefd']) {
      expect([address, refusal(address, 'allow')]).toEqual([address, null]);
      expect([address, refusal(address, 'deny')]).toEqual([address, expect.stringContaining('GATEHOUSE_WEBHOOK_PRIVATE_TARGETS=deny')]);
    }
    for (const address of ['93.184.216.34', '172.32.0.1', '2606:4700::1111']) expect([address, refusal(address, 'deny')]).toEqual([address, null]);
  });

  it('refuses a name that resolves to a refused address (the rule holds after DNS), and an address written in the URL', async () => {
    const sender = createWebhookSender({ ...WEBHOOK_SENDER_DEFAULTS, privateTargets: 'deny' });
    try {
      const port = new URL(receiver.url).port;
      for (const url of [`http://localhost:${port}/dns`, `http://127.0.0.1:${port}/literal`, `http://[::1]:${port}/v6`, 'http://169.254.169.254/latest/meta-data']) {
        await expect(sender.post(url, {}, '{}')).rejects.toBeInstanceOf(RefusedTarget);
      }
      expect((await receiver.received()).filter((r) => ['/dns', '/literal', '/v6'].includes(r.path))).toEqual([]);
    } finally {
      sender.close();
    }
  });

  it('gives up on a receiver that does not answer within the attempt timeout', async () => {
    const sender = createWebhookSender({ ...WEBHOOK_SENDER_DEFAULTS, privateTargets: 'allow', timeoutMs: 300 });
    try {
      await receiver.script(['hang']);
      await expect(sender.post(`${receiver.url}/hang`, {}, '{}')).rejects.toMatchObject({ name: expect.stringMatching(/AbortError|TimeoutError/) });
    } finally {
      sender.close();
    }
  });

  it("answers the receiver's status and the start of its body", async () => {
    const sender = createWebhookSender({ ...WEBHOOK_SENDER_DEFAULTS, privateTargets: 'allow' });
    try {
      const answer = await sender.post(`${receiver.url}/small`, {}, '{}');
      expect(answer).toEqual({ status: 200, body: 'thanks' });
    } finally {
      sender.close();
    }
  });

  describe('with GATEHOUSE_WEBHOOK_PRIVATE_TARGETS=deny', () => {
    let t: TestApp;
    beforeAll(async () => { t = await startTestApp({ jobsInBackground: false, webhooks: { sender: { privateTargets: 'deny' } } }, { ownDatabase: true }); });
    afterAll(() => t.close());

    it('records a delivery to a loopback endpoint as a failed attempt with the reason, sent nowhere and not retried', async () => {
      const env = await t.given.environment();
      const endpoint = await givenEndpoint(t.db, env, `${receiver.url}/denied`);
      await t.given.user(env);
      expect(await t.app.runJobs()).toBe(1);

      const delivery = await t.db.selectFrom('webhook_deliveries').selectAll().where('environment_id', '=', env.id).where('endpoint_id', '=', endpoint.id).executeTakeFirstOrThrow();
      expect(delivery).toMatchObject({ status: 'failed', attempts: 1, last_response_status: null, last_error: expect.stringContaining('GATEHOUSE_WEBHOOK_PRIVATE_TARGETS=deny') });
      const [attempt] = await t.db.selectFrom('webhook_attempts').selectAll().where('environment_id', '=', env.id).where('delivery_id', '=', delivery.id).execute();
      expect(attempt).toMatchObject({ attempt: 1, response_status: null, error: expect.stringContaining('127.0.0.1 is a loopback or private address') });
      expect((await receiver.received()).filter((r) => r.path === '/denied')).toEqual([]);
      t.clock.advance(3_600_000);
      expect(await t.app.runJobs()).toBe(0);
    });
  });
});
