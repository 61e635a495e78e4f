import type { ClusterEvent } from '../../ports/events.js';
import { readCluster } from './cluster-access.js';
import type { CtlContext } from './context.js';
import { CtlError } from './errors.js';

/** Options of `events`. */
export interface EventsOptions {
  /** Keep streaming new events until Ctrl-C. */
  readonly follow?: boolean;
  /** `pretty` (one line each) or `json` (one JSON object per line). */
  readonly format?: string;
}

/** One event as a line: time, member, type, reason (and the duration when there is one). */
export function eventLine(e: ClusterEvent): string {
  const ms = e.data?.['duration_ms'];
  const took = typeof ms === 'number' ? ` (${ms} ms)` : '';
  return `${e.time}  ${e.member.padEnd(10)} ${e.type.padEnd(24)} ${e.reason}${took}`;
}

function isEvent(v: unknown): v is ClusterEvent {
  const o = v as Record<string, unknown> | null;
  return !!o && typeof o === 'object' && typeof o['id'] === 'string' && typeof o['time'] === 'string' && typeof o['type'] === 'string';
}

/** Events of several members merged by time (then member, then id), each once. */
export function mergeEvents(lists: readonly (readonly ClusterEvent[])[]): ClusterEvent[] {
  const seen = new Set<string>();
  const all: ClusterEvent[] = [];
  for (const list of lists) {
    for (const e of list) {
      const key = `${e.member}\u0000${e.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      all.push(e);
    }
  }
  return all.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : a.member < b.member ? -1 : a.member > b.member ? 1 : 0));
}

/**
 * `events`: the events of every member (their `GET /events` history), merged by time; with
 * `--follow`, then every new event as it happens until Ctrl-C, each member's stream resumed
 * after a disconnect from its last event.
 */
export async function events(ctx: CtlContext, opts: EventsOptions = {}): Promise<void> {
  const json = opts.format === 'json';
  if (opts.format !== undefined && opts.format !== 'json' && opts.format !== 'pretty') {
    throw new CtlError('invalid_format', `--format must be pretty or json, got ${JSON.stringify(opts.format)}`);
  }
  const print = (e: ClusterEvent) => ctx.out(json ? JSON.stringify(e) : eventLine(e));
  const cluster = await readCluster(ctx);
  const members = cluster.members.filter((m) => m.apiUrl);
  if (!members.length) throw new CtlError('no_members', `cluster ${ctx.scope} has no member to ask`);
  const lastIds = new Map<string, string>();
  const lists = await Promise.all(
    members.map(async (m) => {
      try {
        const res = await ctx.rest.request(m.apiUrl, 'GET', 'events?format=json', undefined, { timeoutMs: 5000 });
        if (res.status !== 200 || !Array.isArray(res.body)) {
          ctx.warn(`${m.name}: GET /events answered HTTP ${res.status}`);
          return [];
        }
        const list = res.body.filter(isEvent);
        const last = list.at(-1);
        if (last) lastIds.set(m.name, last.id);
        return list;
      } catch (e) {
        ctx.warn(`${m.name}: ${(e as Error).message}`);
        return [];
      }
    }),
  );
  for (const e of mergeEvents(lists)) print(e);
  if (!opts.follow) return;
  const stream = ctx.rest.stream;
  if (!stream) throw new CtlError('no_stream', 'this client cannot follow event streams');
  await Promise.all(
    members.map(async (m) => {
      while (!ctx.signal.aborted) {
        try {
          await stream.call(ctx.rest, m.apiUrl, 'events', lastIds.get(m.name) ?? null, ctx.signal, (data) => {
            let e: unknown;
            try {
              e = JSON.parse(data);
            } catch {
              return;
            }
            if (!isEvent(e)) return;
            lastIds.set(m.name, e.id);
            print(e);
          });
        } catch (e) {
          if (!ctx.signal.aborted) ctx.warn(`${m.name}: event stream interrupted (${(e as Error).message}); reconnecting`);
        }
        if (!ctx.signal.aborted) await ctx.sleep(2000);
      }
    }),
  );
}
