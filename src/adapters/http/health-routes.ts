import type { Context, Next } from 'koa';
import { checkHealth, HEALTH_PATHS, type HealthEndpoint, type HealthQuery } from '../../domain/cluster/health.js';
import type { NodeStatus } from '../../domain/cluster/status.js';
import type { AgentControl } from '../../ports/agent-control.js';
import type { Clock } from '../../ports/clock.js';
import { sendError, statusOf, errorBody } from './errors.js';

const HEALTH_ALLOW = 'GET, HEAD, OPTIONS';
const JSON_TYPE = 'application/json; charset=utf-8';
const NO_QUERY: HealthQuery = Object.freeze({});

/**
 * Serialises each published status document once: the snapshot object changes only when
 * the HA loop publishes, so between ticks every health GET sends the same bytes.
 */
export class StatusBodyCache {
  private status: NodeStatus | null = null;
  private body: Buffer = Buffer.alloc(0);

  /** The JSON bytes of `status`. */
  get(status: NodeStatus): Buffer {
    if (status !== this.status) {
      this.body = Buffer.from(JSON.stringify(status));
      this.status = status;
    }
    return this.body;
  }
}

/**
 * The health checks (seed table, spec §4-§5) and `GET /node`, answered first in the chain
 * with as little work as possible: one Map lookup, the check on the latest snapshot, and a
 * cached body. Nothing here awaits the HA loop, the DCS or the database. Other paths pass on.
 */
export function healthMiddleware(control: AgentControl, clock: Clock, cache: StatusBodyCache) {
  const endpoints = new Map<string, HealthEndpoint>(Object.entries(HEALTH_PATHS));

  return function health(ctx: Context, next: Next): Promise<void> | void {
    const path = ctx.path;
    const endpoint = endpoints.get(path);
    if (endpoint === undefined) {
      if (path === '/node' && (ctx.method === 'GET' || ctx.method === 'HEAD')) {
        ctx.set('Content-Type', JSON_TYPE);
        ctx.body = cache.get(control.snapshot().status);
        return;
      }
      return next();
    }
    const method = ctx.method;
    if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS') {
      ctx.set('Allow', HEALTH_ALLOW);
      sendError(ctx, 405, 'method_not_allowed', `${method} is not allowed on ${path}; allowed: ${HEALTH_ALLOW}`);
      return;
    }
    const snap = control.snapshot();
    let code: number;
    try {
      code = checkHealth(endpoint, snap, ctx.querystring === '' ? NO_QUERY : (ctx.query as HealthQuery), clock.now());
    } catch (err) {
      // Invalid query parameters: 400 naming them, for GET, HEAD and OPTIONS alike.
      const status = statusOf(err);
      ctx.status = status;
      if (method === 'GET' || method === 'HEAD') ctx.body = errorBody(err);
      else ctx.body = null;
      ctx.status = status;
      return;
    }
    if (method === 'OPTIONS') {
      ctx.body = null;
    } else {
      // HEAD: Koa sends the headers of this body (Content-Length) without the body itself.
      ctx.set('Content-Type', JSON_TYPE);
      ctx.body = cache.get(snap.status);
    }
    ctx.status = code;
  };
}
