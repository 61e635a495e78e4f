import Koa, { type Context, type Next } from 'koa';
import { actionRoutes } from './action-routes.js';
import type { AgentApiDeps } from './api-deps.js';
import { createAccessCheck, isUnsafeMethod, type AccessSettings } from './auth.js';
import { clusterRoutes } from './cluster-routes.js';
import { configRoutes } from './config-routes.js';
import { errorMiddleware, sendError } from './errors.js';
import { failsafeRoutes } from './failsafe-routes.js';
import { withHealthFastPath, type RequestListener } from './health-fast-path.js';
import { HealthResponder, healthMiddleware, StatusBodyCache } from './health-routes.js';
import { RouteTable } from './routes.js';

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
function accessCheckOf(access: AgentApiDeps['access']): (ctx: Context) => void {
  if (typeof access !== 'function') return createAccessCheck(access);
  let current: AccessSettings | null = null;
  let check: (ctx: Context) => void = () => {};
  return (ctx) => {
    const settings = access();
    if (settings !== current) {
      check = createAccessCheck(settings);
      current = settings;
    }
    check(ctx);
  };
}

/**
 * The agent's REST API (seed + spec §3-§9). The health checks and `GET|HEAD /node` are
 * answered from the snapshot by a plain node:http handler in front of Koa (see
 * health-fast-path.ts). The Koa chain: error mapping and extra headers; the same health
 * answers for request targets only Koa parses; then the route table, with access control in
 * front of every unsafe method. Serve it with `createAgentServer(api.callback(), ...)`.
 */
export function createAgentApi(deps: AgentApiDeps): AgentApi {
  const app = new Koa();
  // Errors are answered and logged by errorMiddleware; Koa's own stderr printing stays off.
  app.silent = true;
  app.on('error', (err: unknown) => deps.logger.warn('REST API connection error', { err: String(err) }));

  const statusCache = new StatusBodyCache();
  const responder = new HealthResponder(deps.control, deps.clock, statusCache, extraHeadersOf(deps.extraHeaders));
  const checkAccess = accessCheckOf(deps.access);
  const table = new RouteTable([...clusterRoutes(deps, statusCache), ...configRoutes(deps), ...actionRoutes(deps), ...failsafeRoutes(deps)]);
  const handleErrors = errorMiddleware(deps.logger);
  const extra = deps.extraHeaders;

  app.use(
    typeof extra === 'function'
      ? (ctx: Context, next: Next) => {
          const headers = extra();
          for (const name in headers) ctx.set(name, headers[name]!);
          return handleErrors(ctx, next);
        }
      : extra && Object.keys(extra).length
        ? (ctx: Context, next: Next) => {
            for (const name in extra) ctx.set(name, extra[name]!);
            return handleErrors(ctx, next);
          }
        : handleErrors,
  );
  app.use(healthMiddleware(responder));
  app.use(async (ctx: Context) => {
    const found = table.resolve(ctx.path, ctx.method);
    switch (found.kind) {
      case 'not_found':
        sendError(ctx, 404, 'not_found', `no such endpoint: ${ctx.path}`);
        return;
      case 'method_not_allowed':
        ctx.set('Allow', found.allow);
        sendError(ctx, 405, 'method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}; allowed: ${found.allow}`);
        return;
      case 'options':
        ctx.set('Allow', found.allow);
        ctx.body = null;
        ctx.status = 204;
        return;
      case 'handler':
        if (isUnsafeMethod(ctx.method)) checkAccess(ctx);
        await found.handler(ctx);
    }
  });
  return { koa: app, callback: () => withHealthFastPath(responder, app.callback()) };
}
