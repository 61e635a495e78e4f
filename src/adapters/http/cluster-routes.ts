import type { Router } from '@koa/router';
import type { Cluster } from '../../domain/cluster/model/cluster.js';
import { clusterDocument } from '../../domain/cluster/model/cluster-document.js';
import { readCluster } from '../../usecases/read-cluster.js';
import { readHistory } from '../../usecases/read-history.js';
import type { AgentApiDeps } from './api-deps.js';
import type { StatusBodyCache } from './health-routes.js';
import { setJsonBody } from './json-body.js';

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

/** `GET /node`, `/metrics`, `/cluster`, `/history`. */
export function registerClusterRoutes(router: Router, deps: AgentApiDeps, statusCache: StatusBodyCache): void {
  const { control: agent, store, clock, metrics } = deps;
  const clusterBodies = new ClusterBodyCache();
  router.get('/node', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = statusCache.get(agent.snapshot().status);
  });
  router.get('/metrics', (ctx) => {
    const text = metrics.render(agent.snapshot());
    ctx.set('Content-Type', metrics.contentType);
    ctx.body = text;
  });
  router.get('/cluster', async (ctx) => {
    const cluster = await readCluster({ store, agent, clock });
    ctx.type = 'application/json';
    ctx.body = clusterBodies.get(agent.snapshot().node.scope, cluster);
  });
  router.get('/history', async (ctx) => {
    setJsonBody(ctx, await readHistory({ store, agent }));
  });
}
