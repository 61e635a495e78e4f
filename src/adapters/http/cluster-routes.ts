import type { Cluster } from '../../domain/cluster/model/cluster.js';
import { clusterDocument } from '../../domain/cluster/model/cluster-document.js';
import { readCluster } from '../../usecases/read-cluster.js';
import { readHistory } from '../../usecases/read-history.js';
import { DatabaseError, ValidationError, type Problem } from '../../domain/errors.js';
import type { AgentApiDeps } from './api-deps.js';
import type { Exchange } from './exchange.js';
import type { StatusBodyCache } from './health-routes.js';
import { JSON_TYPE, setJsonBody } from './json-body.js';
import { refuseQuery } from './query-check.js';
import type { RouteTable } from './routes.js';

/** Serialises the cluster document once per cluster view (a view is the same object until it changes). */
class ClusterBodyCache {
  private cluster: Cluster | null = null;
  private scope = '';
  private body: Buffer = Buffer.alloc(0);

  /** The JSON bytes of the cluster document of `cluster`. */
  get(scope: string, cluster: Cluster): Buffer {
    if (cluster !== this.cluster || scope !== this.scope) {
      this.body = Buffer.from(JSON.stringify(clusterDocument(scope, cluster)));
      this.cluster = cluster;
      this.scope = scope;
    }
    return this.body;
  }
}

/**
 * The query of `GET /node`: `fresh` (`true`: probe the server now, as the leader race asks;
 * `false`, the default: the status published by the last loop). True when fresh.
 */
function nodeQuery(ex: Exchange): boolean {
  if (ex.querystring === '') return false;
  const problems: Problem[] = [];
  let fresh = false;
  for (const [key, v] of Object.entries(ex.query)) {
    if (key !== 'fresh') problems.push({ path: key, message: 'unknown query parameter (known: fresh)' });
    else if (v === 'true' || v === 'false') fresh = v === 'true';
    else problems.push({ path: 'fresh', message: `expected "true" or "false", got ${JSON.stringify(v)}` });
  }
  if (problems.length) throw new ValidationError(problems, 'invalid_query');
  return fresh;
}

/** `GET /node`, `/metrics`, `/cluster`, `/history`. */
export function registerClusterRoutes(routes: RouteTable, deps: AgentApiDeps, statusCache: StatusBodyCache): void {
  const { control: agent, store, clock, metrics } = deps;
  const clusterBodies = new ClusterBodyCache();
  routes.get('/node', async (ex) => {
    if (nodeQuery(ex)) {
      const status = await agent.freshStatus();
      if (status === null) throw new DatabaseError('probe_failed', 'could not probe PostgreSQL for a fresh status');
      setJsonBody(ex, status);
    } else ex.send(statusCache.get(agent.snapshot().status), JSON_TYPE);
  });
  routes.get('/metrics', (ex) => {
    refuseQuery(ex);
    ex.send(metrics.render(agent.snapshot()), metrics.contentType);
  });
  routes.get('/cluster', async (ex) => {
    refuseQuery(ex);
    const cluster = await readCluster({ store, agent, clock });
    ex.send(clusterBodies.get(agent.snapshot().node.scope, cluster), JSON_TYPE);
  });
  routes.get('/history', async (ex) => {
    refuseQuery(ex);
    setJsonBody(ex, await readHistory({ store, agent }));
  });
}
