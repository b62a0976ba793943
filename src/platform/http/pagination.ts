import type { Page } from './common-schemas.js';

/**
 * Keyset pages: a store fetches `limit + 1` rows ordered by id after the cursor; the extra row only
 * says whether another page exists, and the cursor is the id of the last item returned.
 */
export function toPage<T extends { id: string }>(rows: T[], limit: number): Page<T> {
  const hasMore = rows.length > limit;
  const items = hasMore ? rows.slice(0, limit) : rows;
  return { items, nextCursor: hasMore ? items[items.length - 1].id : null, hasMore };
}
