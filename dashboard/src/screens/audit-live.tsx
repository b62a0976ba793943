import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useSyncExternalStore } from 'react';
import { serverApi } from '../api/gatehouse.js';
import type { AuditEvent } from './audit-parts.js';

/** How often the live feed asks for new events while the tab is visible. */
export const LIVE_POLL_MS = 3_000;
/** At most this many new events are kept on screen; older ones are a page of the log away. */
const KEEP = 500;
/** Pages of the feed read in one poll before the next poll goes on. */
const ROUNDS = 10;

export interface LiveState { afterSequence: number; events: AuditEvent[] }

const onVisibilityChange = (notify: () => void) => {
  document.addEventListener('visibilitychange', notify);
  return () => document.removeEventListener('visibilitychange', notify);
};
/** Whether the tab is shown; a hidden tab polls nothing. */
export const useTabVisible = () => useSyncExternalStore(onVisibilityChange, () => document.visibilityState !== 'hidden');

/**
 * The live feed by sequence: on switching on, it starts after the newest event; then every few seconds it
 * asks the feed for events after the last sequence seen and keeps them, newest first. TanStack Query stops
 * the interval while the tab is hidden (and asks at once when it is shown again); switching off forgets the
 * feed, so switching on starts afresh.
 */
export function useLiveFeed(environmentId: string, live: boolean) {
  const queryClient = useQueryClient();
  const visible = useTabVisible();
  const queryKey = ['audit-live', environmentId];
  useEffect(() => {
    if (!live) return;
    return () => queryClient.removeQueries({ queryKey: ['audit-live', environmentId], exact: true });
  }, [live, environmentId, queryClient]);
  const feed = useQuery({
    queryKey,
    enabled: live,
    queryFn: async ({ signal }): Promise<LiveState> => {
      const api = serverApi(environmentId);
      const previous = queryClient.getQueryData<LiveState>(queryKey);
      if (!previous) {
        // The newest events by id; the largest sequence among them is where the feed starts.
        const newest = await api.searchAuditEvents({ order: 'desc', limit: 20 }, { signal });
        return { afterSequence: Math.max(0, ...newest.items.map((event) => event.sequence)), events: [] };
      }
      let { afterSequence } = previous;
      const fresh: AuditEvent[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const page = await api.pollAuditEvents({ afterSequence, limit: 100 }, { signal });
        fresh.push(...page.items);
        afterSequence = page.nextAfterSequence;
        if (!page.hasMore) break;
      }
      return { afterSequence, events: [...fresh.reverse(), ...previous.events].slice(0, KEEP) };
    },
    refetchInterval: live && visible ? LIVE_POLL_MS : false,
    refetchIntervalInBackground: false,
    refetchOnWindowFocus: true,
    staleTime: 0,
    gcTime: 0,
  });
  return { ...feed, paused: live && !visible };
}
