import { clusterDocument } from '../../domain/cluster/model/cluster-document.js';
import type { NodeStatus } from '../../domain/cluster/model/status.js';
import type { ClusterEvent } from '../../ports/events.js';
import { readCluster } from '../../usecases/read-cluster.js';
import type { AgentApiDeps } from './api-deps.js';
import { setJsonBody } from './json-body.js';
import type { Handler, RouteTable } from './routes.js';
import { STATUS_PAGE_HTML } from './status-page-html.js';

/** How long one gathering of the members' status and events serves every browser. */
const GATHER_TTL_MS = 400;
/** Bound on asking one member. */
const PEER_TIMEOUT_MS = 1000;
/** Events per member the page gets with each refresh. */
const EVENTS_PER_MEMBER = 50;

/** What the status page polls: the cluster document, every member's status document and recent events. */
interface UiData {
  readonly now: number;
  readonly cluster: unknown;
  readonly nodes: Readonly<Record<string, NodeStatus | null>>;
  readonly events: readonly ClusterEvent[];
  /** wardenctl arguments that reach this cluster (`-c <file> ` is the operator's own). */
  readonly ctl: string;
}

/**
 * `GET /ui` (the status page) and `GET /ui/data` (what it polls every second). Both go
 * through `guard`, the access control of the agent: with `restapi.authentication` set, the
 * browser asks for credentials. The page's data is gathered at most once per 400 ms
 * whatever the number of open pages, each member asked with a 1 s bound.
 */
export function registerUiRoutes(routes: RouteTable, deps: AgentApiDeps, guard: Handler): void {
  const { control: agent, store, clock, peers } = deps;
  let cached: { at: number; data: Promise<UiData> } | null = null;
  const gather = async (): Promise<UiData> => {
    const cluster = await readCluster({ store, agent, clock });
    const me = agent.snapshot();
    const entries = await Promise.all(
      cluster.members.map(async (m): Promise<[string, NodeStatus | null, ClusterEvent[]]> => {
        if (m.name === me.node.name) return [m.name, me.status, (deps.events?.since(null) ?? []).slice(-EVENTS_PER_MEMBER)];
        const [status, events] = await Promise.all([m.apiUrl ? peers.fetchStatus(m.apiUrl, PEER_TIMEOUT_MS) : null, m.apiUrl ? peers.fetchEvents(m.apiUrl, PEER_TIMEOUT_MS).then((list) => list.slice(-EVENTS_PER_MEMBER)) : []]);
        return [m.name, status, events];
      }),
    );
    return {
      now: clock.now(),
      cluster: clusterDocument(me.node.scope, cluster),
      nodes: Object.fromEntries(entries.map(([n, s]) => [n, s])),
      events: entries.flatMap(([, , e]) => e),
      ctl: '',
    };
  };
  routes.get('/ui', guard, (ex) => {
    ex.set('Content-Type', 'text/html; charset=utf-8');
    ex.set('Cache-Control', 'no-cache');
    ex.set('Content-Security-Policy', "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:");
    ex.send(STATUS_PAGE_HTML, 'text/html; charset=utf-8');
  });
  routes.get('/ui/data', guard, async (ex) => {
    const now = clock.now();
    if (cached === null || now - cached.at > GATHER_TTL_MS) {
      const data = gather();
      cached = { at: now, data };
      data.catch(() => {
        cached = null;
      });
    }
    setJsonBody(ex, await cached.data);
  });
}
