import { webhookEventTypes, type GatehouseWebhookEvent, type WebhookEventType } from '@gatehouse/sdk';
import { describe, expect, it } from 'vitest';
import { examplePayload, WEBHOOK_EVENT_TYPE_NAMES, type WebhookEventType as CatalogueEventType } from '../../src/webhooks/catalogue.js';

// Compile-time: the SDK's union and the catalogue's are the same set (tsc fails here when one gains a type).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameUnion: Same<WebhookEventType, CatalogueEventType> = true;

describe("the SDK's webhook event types", () => {
  it('are exactly the server catalogue\'s types, in its order', () => {
    expect(sameUnion).toBe(true);
    expect([...webhookEventTypes]).toEqual(WEBHOOK_EVENT_TYPE_NAMES);
  });

  it("describe every catalogue example payload: {type, timestamp, data} with the event data's fields", () => {
    for (const type of webhookEventTypes) {
      const example: GatehouseWebhookEvent = examplePayload(type) as GatehouseWebhookEvent;
      expect(Object.keys(example).sort()).toEqual(['data', 'timestamp', 'type']);
      expect(Object.keys(example.data).sort()).toEqual(['actor', 'auditEventId', 'id', 'metadata', 'object', 'targets']);
      expect(Object.keys(example.data.actor).sort()).toEqual(['id', 'impersonatorId', 'type']);
      expect(example.data.targets[0]).toEqual({ type: example.data.object, id: example.data.id });
    }
  });
});
