import type { Page } from './common-schemas.js';

/**
 * Keyset pages: a store fetches `limit + 1` rows ordered by their key after the cursor; the extra row
 * only says whether another page exists, and the cursor is the key of the last item returned (its id,
 * unless the list is ordered by another uuid, such as members by user id).
 */
export function toPage<T>(rows: T[], limit: number, keyOf: (item: T) => string = (item) => (item as { id: string }).id): Page<T> {
  const hasMore = rows.length > limit;
  const items = hasMore ? rows.slice(0, limit) : rows;
  return { items, nextCursor: hasMore ? keyOf(items[items.length - 1]) : null, hasMore };
}
