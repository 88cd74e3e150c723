import { ApiClient, eventually } from './api-client';

export interface LoggedEvent {
  id: string;
  type: string;
  request_id: string | null;
  data: Record<string, any>;
}

/**
 * Every event the log holds before the first one `isMarker` accepts, once that one is there. Write the
 * marker after the operation under test: since a service's events reach the log in commit order, the
 * answer holds everything that operation emitted, and an event missing from it was never emitted.
 */
export async function eventsBefore(api: ApiClient, isMarker: (event: LoggedEvent) => boolean, timeoutMs = 90_000): Promise<LoggedEvent[]> {
  const before: LoggedEvent[] = [];
  let cursor: string | undefined;
  return eventually(async () => {
    for (;;) {
      const res = await api.get(`/events?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      if (res.status !== 200) throw new Error(`GET /events answered ${res.status}: ${res.text}`);
      for (const event of res.body.data as LoggedEvent[]) {
        if (isMarker(event)) return before;
        before.push(event);
      }
      cursor = res.body.next_cursor;
      if (!res.body.has_more) return undefined;
    }
  }, timeoutMs);
}
