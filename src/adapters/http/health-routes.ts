import type { ServerResponse } from 'node:http';
import { checkHealth, HEALTH_PATHS, type HealthEndpoint, type HealthQuery } from '../../domain/cluster/rules/health.js';
import type { NodeStatus } from '../../domain/cluster/model/status.js';
import type { AgentControl } from '../../ports/agent-control.js';
import type { Clock } from '../../ports/clock.js';
import { errorBody, statusOf } from './errors.js';
import { ResponseHeaders } from './response-headers.js';
import type { RouteTable } from './routes.js';

const HEALTH_ALLOW = 'GET, HEAD, OPTIONS';
const JSON_TYPE = 'application/json; charset=utf-8';
const NO_QUERY: HealthQuery = Object.freeze({});
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

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
 * A complete answer to a health request: status, headers as a flat `[name, value, ...]`
 * list, and the body's bytes as a latin1 string (null: none sent). A latin1 string maps
 * byte for byte, and node sends a string body in one write with the headers where a Buffer
 * takes a second chunk: ~5 % less CPU per request.
 */
export interface HealthReply {
  readonly status: number;
  readonly headers: readonly string[];
  readonly body: string | null;
}

/** The query string parsed as the route table parses it (node's querystring): a repeated parameter becomes an array. */
export function parseQueryString(querystring: string): HealthQuery {
  if (querystring === '') return NO_QUERY;
  const params = new URLSearchParams(querystring);
  const query: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const key of params.keys()) {
    if (key in query) continue;
    const values = params.getAll(key);
    query[key] = values.length <= 1 ? values[0]! : values;
  }
  return query;
}

/** Headers of the snapshot and extra headers in force; rebuilt when either object changes. */
interface PreparedHeaders {
  readonly status: NodeStatus;
  readonly extra: Readonly<Record<string, string>>;
  /** The status document's JSON bytes, latin1-encoded (see HealthReply). */
  readonly body: string;
  /** GET and HEAD: extra headers, Content-Type, Content-Length of the body. */
  readonly withBody: readonly string[];
  /** OPTIONS: extra headers and `Content-Length: 0`. */
  readonly empty: readonly string[];
}

/**
 * The health checks (the API's table of health checks) and `GET|HEAD /node`, answered from the latest
 * snapshot with as little work as possible: one Map lookup, the check, and body and header
 * lists prepared once per published snapshot. Nothing here awaits the HA loop, the DCS or
 * the database. The headers are those the route table sends for any answer, in the same
 * order: `http_extra_headers` first, then the response's own (which win over an extra header
 * of the same name).
 */
export class HealthResponder {
  private readonly endpoints = new Map<string, HealthEndpoint>(Object.entries(HEALTH_PATHS));
  private prepared: PreparedHeaders | null = null;

  constructor(
    private readonly control: AgentControl,
    private readonly clock: Clock,
    private readonly cache: StatusBodyCache,
    private readonly extraHeaders: () => Readonly<Record<string, string>> = () => NO_HEADERS,
  ) {}

  /** The reply to `method path?querystring`, or undefined when the request is not one of the health paths or `GET|HEAD /node`. */
  answer(method: string | undefined, path: string, querystring: string): HealthReply | undefined {
    const endpoint = this.endpoints.get(path);
    if (endpoint === undefined) {
      // With a query, /node goes to the route table, which refuses it.
      if (path === '/node' && (method === 'GET' || method === 'HEAD') && querystring === '') {
        const p = this.prepare(this.control.snapshot().status);
        return { status: 200, headers: p.withBody, body: method === 'GET' ? p.body : null };
      }
      return undefined;
    }
    if (method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS') {
      return this.error(method ?? '', 405, { error: 'method_not_allowed', message: `${method} is not allowed on ${path}; allowed: ${HEALTH_ALLOW}` }, [
        'Allow',
        HEALTH_ALLOW,
      ]);
    }
    const snap = this.control.snapshot();
    let code: number;
    try {
      code = checkHealth(endpoint, snap, parseQueryString(querystring), this.clock.now());
    } catch (err) {
      // Invalid query parameters: 400 naming them, for GET, HEAD and OPTIONS alike.
      return this.error(method, statusOf(err), errorBody(err));
    }
    const p = this.prepare(snap.status);
    if (method === 'OPTIONS') return { status: code, headers: p.empty, body: null };
    return { status: code, headers: p.withBody, body: method === 'GET' ? p.body : null };
  }

  private prepare(status: NodeStatus): PreparedHeaders {
    const extra = this.extraHeaders();
    const p = this.prepared;
    if (p !== null && p.status === status && p.extra === extra) return p;
    const body = this.cache.get(status);
    const withBody = new ResponseHeaders(extra).set('Content-Type', JSON_TYPE).set('Content-Length', String(body.length)).list();
    const empty = new ResponseHeaders(extra).remove('Content-Type').remove('Content-Length').remove('Transfer-Encoding').set('Content-Length', '0').list();
    this.prepared = { status, extra, body: body.toString('latin1'), withBody, empty };
    return this.prepared;
  }

  /** A JSON error (rare: built per request); OPTIONS gets the status without a body. */
  private error(method: string, status: number, body: object, extraPair?: readonly [string, string]): HealthReply {
    const headers = new ResponseHeaders(this.extraHeaders());
    if (extraPair) headers.set(extraPair[0], extraPair[1]);
    if (method === 'OPTIONS') {
      return { status, headers: headers.remove('Content-Type').remove('Content-Length').remove('Transfer-Encoding').set('Content-Length', '0').list(), body: null };
    }
    const bytes = Buffer.from(JSON.stringify(body));
    headers.remove('Content-Length').set('Content-Type', JSON_TYPE).set('Content-Length', String(bytes.length));
    return { status, headers: headers.list(), body: method === 'HEAD' ? null : bytes.toString('latin1') };
  }
}

/** Sends a prepared reply on a node:http response. */
export function writeHealthReply(res: ServerResponse, reply: HealthReply): void {
  res.writeHead(reply.status, reply.headers as string[]);
  if (reply.body === null) res.end();
  else res.end(reply.body, 'latin1');
}

/**
 * The health paths in the route table, for requests the fast path leaves to the routes: a
 * trailing slash or another case is answered as the path itself, as every other route is
 * (a load balancer configured with `/primary/` must not see a 404 as "down"); another method
 * is 405 with `Allow`.
 */
export function registerHealthRoutes(routes: RouteTable, responder: HealthResponder): void {
  for (const path of Object.keys(HEALTH_PATHS)) routes.add(path, ['GET', 'HEAD', 'OPTIONS'], (ex) => {
    const reply = responder.answer(ex.method, path, ex.querystring);
    if (reply === undefined) return;
    writeHealthReply(ex.res, reply);
    ex.respond = false;
  });
}
