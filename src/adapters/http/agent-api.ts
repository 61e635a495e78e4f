import type { IncomingMessage, ServerResponse } from 'node:http';
import { registerActionRoutes } from './action-routes.js';
import type { AgentApiDeps } from './api-deps.js';
import { createAccessCheck, type AccessSettings } from './auth.js';
import { registerClusterRoutes } from './cluster-routes.js';
import { registerConfigRoutes } from './config-routes.js';
import { answerError, sendError } from './errors.js';
import { registerEventRoutes } from './events-routes.js';
import { Exchange } from './exchange.js';
import { registerUiRoutes } from './ui-routes.js';
import { registerFailsafeRoutes } from './failsafe-routes.js';
import { InMemoryEventLog } from '../events/in-memory-event-log.js';
import { requestTarget, type RequestListener } from './health-fast-path.js';
import { HealthResponder, registerHealthRoutes, StatusBodyCache, writeHealthReply } from './health-routes.js';
import { RouteTable, type Handler } from './routes.js';

export type { AgentApiDeps, AgentApiOptions } from './api-deps.js';
export type { RequestListener } from './health-fast-path.js';

/** The agent's REST API: the node:http request listener that serves it. */
export interface AgentApi {
  /** The request listener: health paths and `/node` answered from prepared bytes, everything else by the route table. */
  callback(): RequestListener;
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** `http_extra_headers` as a function of the moment (a fixed object, one asked per request, or none). */
function extraHeadersOf(extra: AgentApiDeps['extraHeaders']): () => Readonly<Record<string, string>> {
  if (typeof extra === 'function') return extra;
  const fixed = extra ?? NO_HEADERS;
  return () => fixed;
}

/**
 * The access check (allowlist, client certificate, Basic auth) as a route guard, rebuilt
 * whenever the settings function returns a new object. Unsafe endpoints and the status page
 * (which shows more than health) run it first, so with `restapi.authentication` set a
 * browser asks for credentials.
 */
function accessGuard(access: AgentApiDeps['access']): Handler {
  let current: AccessSettings | null = null;
  let check: (ex: Exchange) => void = () => {};
  return (ex) => {
    const settings = typeof access === 'function' ? access() : access;
    if (settings !== current) {
      check = createAccessCheck(settings);
      current = settings;
    }
    check(ex);
  };
}

/**
 * The agent's REST API on plain node:http. A request first tries the health fast path (one
 * Map lookup, the check on the latest snapshot, status line, headers and body prepared once
 * per snapshot: load balancers poll these many times a second), then the route table: every
 * unsafe endpoint runs the access check first; an unknown path is 404, a known path with
 * another method 405 with `Allow` (OPTIONS there: 204 with `Allow`); every error a JSON
 * `{error, message}`. Serve it with `createAgentServer(api.callback(), ...)`.
 */
export function createAgentApi(deps: AgentApiDeps): AgentApi {
  const statusCache = new StatusBodyCache();
  const extraHeaders = extraHeadersOf(deps.extraHeaders);
  const responder = new HealthResponder(deps.control, deps.clock, statusCache, extraHeaders);
  const guard = accessGuard(deps.access);
  const routes = new RouteTable();
  registerHealthRoutes(routes, responder);
  registerClusterRoutes(routes, deps, statusCache);
  registerConfigRoutes(routes, deps, guard);
  registerActionRoutes(routes, deps, guard);
  registerFailsafeRoutes(routes, deps, guard);
  registerUiRoutes(routes, deps, guard);
  registerEventRoutes(routes, deps.events ?? new InMemoryEventLog({ member: '', clock: deps.clock, logger: null, capacity: 1 }), extraHeaders);

  /** Runs the route's handlers in order and answers what they left unanswered. */
  const route = async (ex: Exchange): Promise<void> => {
    try {
      const match = routes.match(ex.method, ex.path);
      if (match.kind === 'handlers') {
        for (const h of match.handlers) await h(ex);
        if (!ex.respond || ex.body !== null || ex.status !== 404) return;
        sendError(ex, 404, 'not_found', `no such endpoint: ${ex.path}`);
      } else if (match.kind === 'not_allowed') {
        ex.set('Allow', match.allow);
        if (ex.method === 'OPTIONS') ex.empty(204);
        else sendError(ex, 405, 'method_not_allowed', `${ex.method} is not allowed on ${ex.path}; allowed: ${match.allow}`);
      } else {
        sendError(ex, 404, 'not_found', `no such endpoint: ${ex.path}`);
      }
    } catch (err) {
      if (!ex.respond || ex.res.headersSent) {
        deps.logger.warn('REST API request failed after its answer started', { method: ex.method, path: ex.path, err: String(err) });
        return;
      }
      answerError(ex, err, deps.logger);
    }
  };

  const listener = (req: IncomingMessage, res: ServerResponse): void => {
    const { path, query } = requestTarget(req.url ?? '/');
    let reply;
    try {
      reply = responder.answer(req.method, path, query);
    } catch {
      // An unexpected failure: the route table answers the same request with its 500 and logs it.
      reply = undefined;
    }
    if (reply !== undefined) {
      try {
        writeHealthReply(res, reply);
        return;
      } catch {
        // Nothing was sent (e.g. an extra header node refuses): the routes answer and report it.
        if (res.headersSent) return;
      }
    }
    const ex = new Exchange(req, res, path, query, extraHeaders());
    void route(ex).then(() => {
      try {
        ex.end();
      } catch (err) {
        deps.logger.warn('REST API response could not be sent', { method: ex.method, path: ex.path, err: String(err) });
        if (!res.headersSent) {
          res.statusCode = 500;
          res.end();
        }
      }
    });
  };
  return { callback: () => listener };
}
