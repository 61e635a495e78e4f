import { METHODS } from 'node:http';
import { Router } from '@koa/router';
import Koa, { type Context, type Middleware, type Next } from 'koa';
import { registerActionRoutes } from './action-routes.js';
import type { AgentApiDeps } from './api-deps.js';
import { createAccessCheck, type AccessSettings } from './auth.js';
import { registerClusterRoutes } from './cluster-routes.js';
import { registerConfigRoutes } from './config-routes.js';
import { errorMiddleware, sendError } from './errors.js';
import { registerEventRoutes } from './events-routes.js';
import { registerUiRoutes } from './ui-routes.js';
import { registerFailsafeRoutes } from './failsafe-routes.js';
import { InMemoryEventLog } from '../events/in-memory-event-log.js';
import { withHealthFastPath, type RequestListener } from './health-fast-path.js';
import { HealthResponder, registerHealthRoutes, StatusBodyCache } from './health-routes.js';

export type { AgentApiDeps, AgentApiOptions } from './api-deps.js';

/** The agent's REST API: the Koa application and the request listener that serves it. */
export interface AgentApi {
  readonly koa: Koa;
  /** The node:http listener: health paths and `/node` answered directly, everything else by Koa. */
  callback(): RequestListener;
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** `http_extra_headers` as a function of the moment (a fixed object, one asked per request, or none). */
function extraHeadersOf(extra: AgentApiDeps['extraHeaders']): () => Readonly<Record<string, string>> {
  if (typeof extra === 'function') return extra;
  const fixed = extra ?? NO_HEADERS;
  return () => fixed;
}

/** The access check for fixed settings, or one rebuilt whenever the settings function returns a new object. */
function accessGuard(access: AgentApiDeps['access']): Middleware {
  let current: AccessSettings | null = null;
  let check: (ctx: Context) => void = () => {};
  return (ctx: Context, next: Next) => {
    const settings = typeof access === 'function' ? access() : access;
    if (settings !== current) {
      check = createAccessCheck(settings);
      current = settings;
    }
    check(ctx);
    return next();
  };
}

/**
 * The access check for reads that show more than health (the status page): the same check
 * as for unsafe requests (allowlist, client certificate, Basic auth), so with
 * `restapi.authentication` set a browser asks for credentials.
 */
function readGuard(access: AgentApiDeps['access']): Middleware {
  return accessGuard(access);
}

/** The order methods are listed in `Allow`. */
const ALLOW_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** The router's `Allow` list, in the usual order and with OPTIONS, which every path answers. */
function allowOf(ctx: Context): string {
  const listed = new Set([...ctx.response.get('Allow').split(',').map((m) => m.trim()).filter(Boolean), 'OPTIONS']);
  return [...ALLOW_ORDER.filter((m) => listed.has(m)), ...[...listed].filter((m) => !ALLOW_ORDER.includes(m))].join(', ');
}

/**
 * Answers what the router left unanswered: an unknown path is 404; a known path with another
 * method 405 with `Allow` (the body is the API's JSON error), and OPTIONS there 204 with `Allow`.
 */
async function unanswered(ctx: Context, next: Next): Promise<void> {
  await next();
  if (ctx.respond === false) return;
  if (ctx.method === 'OPTIONS' && ctx.status === 200 && ctx.response.get('Allow')) {
    ctx.set('Allow', allowOf(ctx));
    ctx.body = null;
    ctx.status = 204;
    return;
  }
  if (ctx.body !== undefined && ctx.body !== null) return;
  if (ctx.status === 405) {
    ctx.set('Allow', allowOf(ctx));
    sendError(ctx, 405, 'method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${ctx.response.get('Allow')}`);
  } else if (ctx.status === 404) {
    sendError(ctx, 404, 'not_found', `no such endpoint: ${ctx.path}`);
  }
}

/**
 * The agent's REST API. Requests are routed by one router (@koa/router); every unsafe
 * endpoint runs the access check first. In front of Koa, a plain node:http handler answers the
 * health checks and `GET|HEAD /node` from the snapshot (see health-fast-path.ts: load
 * balancers poll those many times a second, and the Koa context and middleware chain cost
 * about as much CPU as the rest of such a request). Serve it with
 * `createAgentServer(api.callback(), ...)`.
 */
export function createAgentApi(deps: AgentApiDeps): AgentApi {
  const app = new Koa();
  // Errors are answered and logged by errorMiddleware; Koa's own stderr printing stays off.
  app.silent = true;
  app.on('error', (err: unknown) => deps.logger.warn('REST API connection error', { err: String(err) }));

  const statusCache = new StatusBodyCache();
  const extraHeaders = extraHeadersOf(deps.extraHeaders);
  const responder = new HealthResponder(deps.control, deps.clock, statusCache, extraHeaders);
  const guard = accessGuard(deps.access);
  // Every method is "implemented", so any method a path lacks is 405 (a router answers unknown methods with 501).
  const router = new Router({ methods: [...METHODS] });
  registerHealthRoutes(router, responder);
  registerClusterRoutes(router, deps, statusCache);
  registerConfigRoutes(router, deps, guard);
  registerActionRoutes(router, deps, guard);
  registerFailsafeRoutes(router, deps, guard);
  registerUiRoutes(router, deps, readGuard(deps.access));
  registerEventRoutes(router, deps.events ?? new InMemoryEventLog({ member: '', clock: deps.clock, logger: null, capacity: 1 }), extraHeaders);

  const handleErrors = errorMiddleware(deps.logger);
  app.use((ctx: Context, next: Next) => {
    const headers = extraHeaders();
    for (const name in headers) ctx.set(name, headers[name]!);
    return handleErrors(ctx, next);
  });
  app.use(unanswered);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return { koa: app, callback: () => withHealthFastPath(responder, app.callback()) };
}
