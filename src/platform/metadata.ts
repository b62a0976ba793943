import { metadataTooLarge } from './http/problems.js';
import { deepMerge, jsonByteSize, type JsonObject } from './json.js';

/** Every metadata budget in the service: a user's three bags together, an invitation's two, an audit event's one. */
export const METADATA_BUDGET_BYTES = 8192;

/** The bags' total size: 8192 bytes of compact JSON at most, together. */
export const metadataSize = (...bags: (JsonObject | null | undefined)[]) =>
  bags.reduce<number>((sum, bag) => sum + jsonByteSize(bag ?? {}), 0);

/** 400 metadata_too_large unless the bags together fit the budget. */
export function assertMetadataBudget(...bags: (JsonObject | null | undefined)[]) {
  const bytes = metadataSize(...bags);
  if (bytes > METADATA_BUDGET_BYTES) throw metadataTooLarge(bytes, METADATA_BUDGET_BYTES);
}

/**
 * Deep-merges each bag the patch names into the current bags; bags the patch leaves out stay as they
 * are. The merged bags must fit the budget together.
 */
export function mergeBags<K extends string>(current: Record<K, JsonObject>, patch: Partial<Record<K, JsonObject | undefined>>): Record<K, JsonObject> {
  const merged = { ...current };
  for (const bag of Object.keys(current) as K[]) {
    const changes = patch[bag];
    if (changes) merged[bag] = deepMerge(current[bag], changes);
  }
  assertMetadataBudget(...Object.values<JsonObject>(merged));
  return merged;
}
