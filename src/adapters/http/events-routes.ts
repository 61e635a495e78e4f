import { ValidationError } from '../../domain/errors.js';
import type { ClusterEvent, EventLog } from '../../ports/events.js';
import type { Exchange } from './exchange.js';
import { setJsonBody } from './json-body.js';
import type { RouteTable } from './routes.js';

/** A stream whose client reads slower than this many buffered bytes is closed (it can resume with Last-Event-ID). */
const MAX_BUFFERED_BYTES = 1 << 20;
/** A comment line this often keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000;
/** What EventSource clients wait before reconnecting. */
const RETRY_MS = 2000;

/** One event as a Server-Sent Events message. */
export function sseMessage(e: ClusterEvent): string {
  return `id: ${e.id}\ndata: ${JSON.stringify(e)}\n\n`;
}

/** The query of `GET /events`: `format` (`sse`, default, or `json`) and `last_event_id` (as the header). */
function eventsQuery(ex: Exchange): { json: boolean; lastId: string | null } {
  const problems: { path: string; message: string }[] = [];
  let json = false;
  let lastId: string | null = null;
  for (const [key, value] of Object.entries(ex.query)) {
    const v = Array.isArray(value) ? value[value.length - 1] : value;
    if (key === 'format') {
      if (v === 'json') json = true;
      else if (v !== 'sse') problems.push({ path: 'format', message: `expected "sse" or "json", got ${JSON.stringify(v)}` });
    } else if (key === 'last_event_id') {
      lastId = v ?? null;
    } else {
      problems.push({ path: key, message: 'unknown query parameter (known: format, last_event_id)' });
    }
  }
  if (problems.length) throw new ValidationError(problems, 'invalid_query');
  const header = ex.header('last-event-id');
  return { json, lastId: header !== '' ? header : lastId };
}

/**
 * `GET /events`: the agent's events as Server-Sent Events (`id:` and one JSON `data:` line
 * each), starting with the history after `Last-Event-ID` (or everything kept), then live.
 * `?format=json` answers the history as a JSON array instead. Streams are written from
 * the event log's subscription, away from the health fast path: a stream costs nothing
 * until an event happens.
 */
export function registerEventRoutes(routes: RouteTable, events: EventLog, extraHeaders: () => Readonly<Record<string, string>>): void {
  routes.get('/events', (ex) => {
    const { json, lastId } = eventsQuery(ex);
    const history = events.since(lastId);
    if (json || ex.method === 'HEAD') {
      setJsonBody(ex, history);
      return;
    }
    ex.respond = false;
    // A body sent with the request is dropped: unread, it stopped the socket from being read,
    // so a client that went away was noticed only by the next heartbeat's write.
    ex.req.resume();
    const res = ex.res;
    res.writeHead(200, {
      ...extraHeaders(),
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      // nginx must not buffer the stream.
      'X-Accel-Buffering': 'no',
    });
    ex.req.socket.setNoDelay(true);
    let open = true;
    const close = () => {
      if (!open) return;
      open = false;
      unsubscribe();
      clearInterval(heartbeat);
      res.end();
    };
    const send = (text: string) => {
      if (!open) return;
      res.write(text);
      if (res.writableLength > MAX_BUFFERED_BYTES) close();
    };
    send(`retry: ${RETRY_MS}\n\n`);
    for (const e of history) send(sseMessage(e));
    const unsubscribe = events.subscribe((e) => send(sseMessage(e)));
    const heartbeat = setInterval(() => send(': keepalive\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    res.on('close', close);
    res.on('error', close);
  });
}
