import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { createServer, validateHeaderName, validateHeaderValue } from 'node:http';
import { FIRST_REQUEST_MS, limitConnections, type ErrorBodyOf } from './connection-limits.js';
import { requestTarget } from './health-fast-path.js';
import type { AddressInfo } from 'node:net';
import type { ServerOptions as HttpsServerOptions } from 'node:https';
import type { TLSSocket } from 'node:tls';
import { gzipSync } from 'node:zlib';
import type { ExpositionFormat } from '../../domain/collectors/exposition.js';
import { acceptsGzip, negotiateFormat } from '../../domain/collectors/negotiation.js';
import { ROLE_CHECK_PATHS, roleCheckStatus } from '../../domain/collectors/routing.js';
import type { ServerState } from '../../domain/collectors/server-state.js';
import { statJson, statTable, type CollectorStat } from '../../domain/collectors/stat.js';
import type { Logger } from '../../ports/logger.js';
import { ValidationError, type Problem } from '../../domain/errors.js';

/** The JSON body of /reload. */
export interface ReloadResult {
  readonly status: 'success' | 'error';
  readonly message: string;
  /** ISO 8601. */
  readonly timestamp: string;
}

/** The metrics of one scrape: its bytes in a format, and a place to keep a compressed copy once. */
export interface ScrapeAnswer {
  /** The exposition as consecutive parts (written without copying them together). */
  parts(format: ExpositionFormat): readonly Buffer[];
  bytes(format: ExpositionFormat): Buffer;
  memo(key: string, make: () => Buffer): Buffer;
}

/** What the exporter's HTTP API needs from the exporter. Every member but scrape/probe/reload answers at once. */
export interface ExporterApi {
  readonly state: ServerState;
  readonly ready: boolean;
  /** The metrics of the server of --url. */
  scrape(): Promise<ScrapeAnswer>;
  /** The metrics of a named target; rejects with an error of code `unknown_target` for a name not configured. */
  probe(target: string): Promise<ScrapeAnswer>;
  reload(): Promise<ReloadResult>;
  explain(): string;
  stats(): CollectorStat[];
}

/** Checks a request's credentials (basic auth). */
export interface RequestAuthenticator {
  /** True when the Authorization header holds valid credentials. Never rejects. */
  check(authorization: string | undefined): Promise<boolean>;
}

/** Settings of the exporter's HTTP API. */
export interface ExporterHttpOptions {
  readonly telemetryPath: string;
  /** Offer OpenMetrics when the scraper asks for it (off with the legacy metric names). */
  readonly openMetrics?: boolean;
  /** Basic auth for every endpoint (except the health checks when `openHealthChecks`). */
  readonly auth?: RequestAuthenticator | null;
  /** Serve the health, role and probe checks without authentication. */
  readonly openHealthChecks?: boolean;
  /** Headers added to every response (the web configuration's http_server_config.headers). */
  readonly headers?: Readonly<Record<string, string>>;
}

const TEXT_TYPE = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

/** Smallest body worth compressing: below it gzip's header and checksum outweigh the gain. */
const GZIP_MIN_BYTES = 1024;

type Handler = (req: IncomingMessage, res: ServerResponse, query: URLSearchParams) => Promise<void> | void;

interface Route {
  readonly methods: readonly string[];
  readonly handler: Handler;
  /** A health or role check (may be left open when basic auth is on). */
  readonly health: boolean;
  /** The query parameters it takes, each at most once; any other is a 400. */
  readonly query?: readonly string[];
}

/** Why a query does not fit a route (unknown or repeated parameters), or null. */
function queryProblem(route: Route, query: URLSearchParams): string | null {
  const allowed = route.query ?? [];
  const unknown = [...new Set(query.keys())].filter((k) => !allowed.includes(k));
  if (unknown.length) return `unknown query parameter ${unknown.map((k) => JSON.stringify(k)).join(', ')} (${allowed.length ? `known: ${allowed.join(', ')}` : 'this endpoint takes none'})`;
  const repeated = allowed.filter((k) => query.getAll(k).length > 1);
  return repeated.length ? `give ${repeated.join(', ')} once` : null;
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}): void {
  // OPTIONS gets the status alone, as the agent's health checks answer it: the check that
  // HAProxy's `option httpchk` sends by default reads nothing else.
  if (res.req.method === 'OPTIONS') {
    res.writeHead(status, { ...extra, 'Content-Length': '0' });
    return void res.end();
  }
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  res.writeHead(status, { ...extra, 'Content-Type': type, 'Content-Length': String(bytes.length) });
  res.end(res.req.method === 'HEAD' ? undefined : bytes);
}

function text(res: ServerResponse, status: number, body: string, extra?: Record<string, string>): void {
  send(res, status, TEXT_TYPE, body, extra);
}

function json(res: ServerResponse, status: number, body: unknown, extra?: Record<string, string>): void {
  send(res, status, JSON_TYPE, `${JSON.stringify(body)}\n`, extra);
}

/** The exporter's error shape, `{code, error}`, for the refusals made below the routes too. */
const exporterErrorBody: ErrorBodyOf = (code, message) => ({ code, error: message });

/** A refusal or failure: JSON `{code, error}` like every error the exporter answers (a role check's 404 is an answer, not an error). */
function error(res: ServerResponse, status: number, code: string, message: string, extra?: Record<string, string>): void {
  json(res, status, exporterErrorBody(code, message), extra);
}

/** Paths the API serves besides the telemetry path (the telemetry path must not shadow one). */
export function reservedPaths(): string[] {
  return [...Object.keys(ROLE_CHECK_PATHS), '/', '/liveness', '/readiness', '/reload', '/explain', '/stat', '/probe'];
}

/** Writes a scrape's bytes in the negotiated format, gzip-compressed (once per scrape run) when the scraper accepts it. */
function sendMetrics(req: IncomingMessage, res: ServerResponse, answer: ScrapeAnswer, openMetrics: boolean): void {
  const { format, contentType } = negotiateFormat(req.headers.accept, openMetrics);
  const parts = answer.parts(format);
  let length = 0;
  for (const p of parts) length += p.length;
  if (length >= GZIP_MIN_BYTES && acceptsGzip(req.headers['accept-encoding'])) {
    const gz = answer.memo(`gzip:${format}`, () => gzipSync(answer.bytes(format), { level: 6 }));
    return send(res, 200, contentType, gz, { Vary: 'Accept, Accept-Encoding', 'Content-Encoding': 'gzip' });
  }
  res.writeHead(200, { Vary: 'Accept, Accept-Encoding', 'Content-Type': contentType, 'Content-Length': String(length) });
  if (req.method === 'HEAD') return void res.end();
  // Corked: the parts (one per collector) leave in as few writes as the socket allows.
  res.cork();
  for (let i = 0; i < parts.length - 1; i++) res.write(parts[i]!);
  res.end(parts[parts.length - 1]);
  res.uncork();
}

function routes(api: ExporterApi, opts: ExporterHttpOptions): Map<string, Route> {
  const table = new Map<string, Route>();
  const openMetrics = opts.openMetrics ?? true;
  const get = (path: string, handler: Handler, health = false, query: readonly string[] = []) => table.set(routeKey(path), { methods: ['GET', 'HEAD'], handler, health, query });
  // Health and role checks take OPTIONS too, answered like GET without a body.
  const check = (path: string, handler: Handler) => table.set(routeKey(path), { methods: ['GET', 'HEAD', 'OPTIONS'], handler, health: true, query: [] });

  get(opts.telemetryPath, async (req, res) => sendMetrics(req, res, await api.scrape(), openMetrics));
  get('/probe', async (req, res, query) => {
    const targets = query.getAll('target');
    if (targets.length !== 1 || targets[0] === '') {
      return json(res, 400, { code: 'invalid_query', error: 'the target query parameter is required: /probe?target=<name from the targets file>' });
    }
    let answer: ScrapeAnswer;
    try {
      answer = await api.probe(targets[0]!);
    } catch (e) {
      if ((e as { code?: unknown }).code === 'unknown_target') return json(res, 404, { code: 'unknown_target', error: (e as Error).message });
      throw e;
    }
    sendMetrics(req, res, answer, openMetrics);
  }, false, ['target']);
  for (const [path, role] of Object.entries(ROLE_CHECK_PATHS)) {
    check(path, (_req, res) => {
      const status = api.state.status;
      text(res, roleCheckStatus(role, status), `${status}\n`);
    });
  }
  check('/liveness', (_req, res) => text(res, 200, 'alive\n'));
  check('/readiness', (_req, res) => {
    const status = api.state.status;
    if (api.ready) text(res, 200, `${status}\n`);
    else text(res, 503, `${status === 'primary' || status === 'replica' ? 'starting' : status}\n`);
  });
  table.set('/reload', {
    methods: ['GET', 'POST'],
    health: false,
    handler: async (_req, res) => {
      const result = await api.reload();
      json(res, result.status === 'success' ? 200 : 500, result);
    },
  });
  get('/explain', (_req, res) => text(res, 200, api.explain()));
  get('/stat', (_req, res, query) => {
    const format = query.get('format');
    if (format === 'json') json(res, 200, statJson(api.stats()));
    else if (format === null || format === 'text') text(res, 200, statTable(api.stats()));
    else json(res, 400, { code: 'invalid_query', error: `unknown format ${JSON.stringify(format)}: expected text or json` });
  }, false, ['format']);
  get('/', (_req, res) =>
    text(
      res,
      200,
      [
        'warden-exporter',
        '',
        `${opts.telemetryPath}  Prometheus metrics (OpenMetrics and gzip on request)`,
        '/probe?target=<name>  metrics of a target named in the targets file',
        '/up /health /read /primary /replica (and aliases)  role checks',
        '/liveness /readiness  probes',
        '/reload  reload the collectors (GET or POST)',
        '/explain  the collectors and their status',
        '/stat  collector statistics (?format=json)',
        '',
      ].join('\n'),
    ),
  );
  return table;
}

/** A path as the route table holds it: one trailing slash is the same path (a scrape or check configured with `/metrics/`). */
function routeKey(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}

/**
 * The exporter's request handler over plain node:http: a flat path table (no framework, no
 * pattern matching on the hot /metrics path). Unknown paths 404; a known path with another
 * method 405 with Allow; missing or wrong credentials 401 with a Basic challenge; each a JSON
 * `{code, error}` as the query refusals are.
 */
export function createExporterHandler(api: ExporterApi, opts: ExporterHttpOptions, logger: Logger): RequestListener {
  const table = routes(api, opts);
  const extraHeaders = Object.entries(opts.headers ?? {});
  // Checked here too, not only in the web configuration: a header Node refuses would throw in every request.
  const refused = extraHeaders.flatMap(([k, v]): Problem[] => {
    try {
      validateHeaderName(k);
      validateHeaderValue(k, v);
      return [];
    } catch (e) {
      return [{ path: `http_server_config.headers.${k}`, message: (e as Error).message }];
    }
  });
  if (refused.length) throw new ValidationError(refused);
  return (req, res) => {
    for (const [k, v] of extraHeaders) res.setHeader(k, v);
    const target = requestTarget(req.url ?? '/');
    const path = target.path;
    const route = table.get(routeKey(path));
    if (!route) return error(res, 404, 'not_found', `no such endpoint: ${path}`);
    if (!route.methods.includes(req.method ?? '')) {
      const allow = route.methods.filter((m) => m !== 'HEAD').join(', ');
      return error(res, 405, 'method_not_allowed', `${req.method ?? ''} is not allowed on ${path}; allowed: ${allow}`, { Allow: allow });
    }
    const query = new URLSearchParams(target.query);
    const serve = async (): Promise<void> => {
      if (opts.auth && !(route.health && opts.openHealthChecks)) {
        if (!(await opts.auth.check(req.headers.authorization))) {
          const message = req.headers.authorization === undefined ? 'authentication required' : 'invalid credentials';
          return error(res, 401, 'unauthorized', message, { 'WWW-Authenticate': 'Basic realm="warden-exporter", charset="UTF-8"' });
        }
      }
      const bad = target.query === '' ? null : queryProblem(route, query);
      if (bad !== null) return json(res, 400, { code: 'invalid_query', error: bad });
      await route.handler(req, res, query);
    };
    serve().catch((e: unknown) => {
      logger.error('exporter request failed', { path, error: (e as Error).message });
      if (!res.headersSent) error(res, 500, 'internal_error', `internal error: ${(e as Error).message}`);
      else res.destroy();
    });
  };
}

/** A listening exporter HTTP server. */
export interface ExporterHttpServer {
  readonly server: Server;
  /** The bound address (useful with port 0). */
  readonly address: AddressInfo;
  /** True when it serves HTTPS. */
  readonly tls: boolean;
  close(): Promise<void>;
}

/**
 * Listens on host:port (host undefined: every interface), over TLS when `tls` is given (node:https
 * is loaded only then). Rejects when the port cannot be bound.
 */
export async function listenExporter(
  handler: RequestListener,
  host: string | undefined,
  port: number,
  tls?: { readonly options: HttpsServerOptions; accept(socket: TLSSocket): boolean },
): Promise<ExporterHttpServer> {
  const server: Server = tls ? (await import('node:https')).createServer({ handshakeTimeout: FIRST_REQUEST_MS, ...tls.options }, handler) : createServer(handler);
  if (tls) server.on('secureConnection', (socket: TLSSocket) => (tls.accept(socket) ? undefined : socket.destroy()));
  limitConnections(server, undefined, undefined, exporterErrorBody);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    address: server.address() as AddressInfo,
    tls: tls !== undefined,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
