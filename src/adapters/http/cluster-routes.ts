import type { AgentApiDeps } from './api-deps.js';
import { ClusterBodyCache, ClusterViewSource } from './cluster-view.js';
import type { StatusBodyCache } from './health-routes.js';
import { setJsonBody } from './json-body.js';
import type { Route } from './routes.js';

/** `GET /node`, `/metrics`, `/cluster` (from a recent cluster view, see ClusterViewSource), `/history` (spec §3, §6, §9). */
export function clusterRoutes(deps: AgentApiDeps, statusCache: StatusBodyCache): Route[] {
  const { control, store, clock, metrics, logger } = deps;
  const views = new ClusterViewSource(control, store, clock, logger);
  const clusterBodies = new ClusterBodyCache();
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
          const cluster = await views.current();
          ctx.type = 'application/json';
          ctx.body = clusterBodies.get(control.snapshot().node.scope, cluster);
        },
      },
    },
    {
      path: '/history',
      methods: {
        GET: async (ctx) => {
          setJsonBody(ctx, await control.history());
        },
      },
    },
  ];
}
