/**
 * The daemon's WebSockets, kept open: the bot stream (positions) and the event stream (what
 * changed). A dropped socket reconnects with a growing pause; a socket closed for an expired
 * token (4401) refreshes the token first; the event stream resumes after the last id it saw.
 */
import { refresh, token } from './api';

export interface Stream {
  close(): void;
}

const CREDENTIAL_INVALID = 4401;
const PERMISSION_REVOKED = 4403;

/**
 * Opens `path` as a WebSocket with the access token and `query`; `onMessage` gets each parsed
 * message. `query()` is read at every (re)connect, so the event stream can resume.
 */
export function openStream<M>(path: string, query: () => Record<string, string>, onMessage: (message: M) => void, onUp?: (up: boolean) => void): Stream {
  let socket: WebSocket | undefined;
  let closed = false;
  let pause = 500;
  let retry: ReturnType<typeof setTimeout> | undefined;

  const connect = () => {
    if (closed) return;
    const params = new URLSearchParams({ ...query(), access_token: token() ?? '' });
    const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${path}?${params}`;
    const ws = new WebSocket(url);
    socket = ws;
    ws.onopen = () => {
      pause = 500;
      onUp?.(true);
    };
    ws.onmessage = (e) => {
      try {
        onMessage(JSON.parse(String(e.data)) as M);
      } catch {
        // a message that is not JSON is not ours
      }
    };
    ws.onclose = (e) => {
      onUp?.(false);
      if (closed || e.code === PERMISSION_REVOKED) return;
      const again = () => {
        retry = setTimeout(connect, pause);
        pause = Math.min(pause * 2, 5_000);
      };
      // An upgrade refused for the token shows as 1006 too: refreshing first costs one call.
      if (e.code === CREDENTIAL_INVALID || e.code === 1006) void refresh().then(again);
      else again();
    };
  };
  connect();
  return {
    close() {
      closed = true;
      if (retry !== undefined) clearTimeout(retry);
      socket?.close(1000, 'done');
    },
  };
}

/** The event stream, resuming after the last event seen; `onEvent` gets each event. */
export function openEvents(onEvent: (event: EventItem) => void, filter: Record<string, string> = {}): Stream {
  let after: number | undefined;
  return openStream('/api/v2/events/stream', () => (after === undefined ? filter : { ...filter, after: String(after) }), (m: { type: string; event?: EventItem; last_id?: number }) => {
    if (m.type === 'ready' && after === undefined && typeof m.last_id === 'number') after = m.last_id;
    if (m.type === 'event' && m.event) {
      after = m.event.id;
      onEvent(m.event);
    }
  });
}

export interface EventItem {
  id: number;
  component: string;
  created_at_utc?: string;
  created_at?: string;
  description: string;
  hex_value: string;
  severity: number;
  bot_id: string | null;
  level_id: number | null;
  request_id: string | null;
}
