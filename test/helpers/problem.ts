import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

export const INSTANCE = /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Asserts the RFC 9457 body every error carries, with its status and stable code; returns the body. */
export function expectProblem(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(['detail', 'instance', 'properties', 'status', 'title', 'type']);
  expect(body.type).toBe(`urn:gatehouse:problem:${code}`);
  expect(body.title).toEqual(expect.any(String));
  expect(body.title.length).toBeGreaterThan(0);
  expect(body.status).toBe(status);
  expect(body.detail).toEqual(expect.any(String));
  expect(body.detail.length).toBeGreaterThan(0);
  expect(body.instance).toMatch(INSTANCE);
  expect(body.properties.code).toBe(code);
  return body;
}
