import { parseCluster, type Cluster } from '../../domain/cluster/cluster.js';
import { clusterDocument } from '../../domain/cluster/cluster-document.js';
import type { DcsSnapshot } from '../../domain/cluster/dcs-keys.js';
import type { Dcs } from '../../ports/dcs.js';
import type { Logger } from '../../ports/logger.js';
import type { AgentApiDeps } from './api-deps.js';
import type { StatusBodyCache } from './health-routes.js';
import type { Route } from './routes.js';

/** Reads and parses the cluster from the DCS (DcsUnavailableError -> 503); malformed keys are logged and treated as absent. */
export async function readCluster(dcs: Dcs, logger: Logger): Promise<{ cluster: Cluster; raw: DcsSnapshot }> {
  const raw = await dcs.readAll();
  const { cluster, problems } = parseCluster(raw);
  for (const p of problems) logger.warn('ignoring malformed DCS key', { path: p.path, problem: p.message });
  return { cluster, raw };
}

/** `GET /node`, `/metrics`, `/cluster`, `/history` (spec §3, §6, §9). */
export function clusterRoutes(deps: AgentApiDeps, statusCache: StatusBodyCache): Route[] {
  const { control, dcs, metrics, logger } = deps;
  return [
    {
      path: '/node',
      methods: {
        GET: (ctx) => {
          ctx.type = 'application/json';
          ctx.body = statusCache.get(control.snapshot().status);
        },
      },
    },
    {
      path: '/metrics',
      methods: {
        GET: async (ctx) => {
          const text = await metrics.render(control.snapshot());
          ctx.set('Content-Type', metrics.contentType);
          ctx.body = text;
        },
      },
    },
    {
      path: '/cluster',
      methods: {
        GET: async (ctx) => {
          const { cluster } = await readCluster(dcs, logger);
          ctx.body = clusterDocument(control.snapshot().node.scope, cluster);
        },
      },
    },
    {
      path: '/history',
      methods: {
        GET: async (ctx) => {
          ctx.body = await control.history();
        },
      },
    },
  ];
}
