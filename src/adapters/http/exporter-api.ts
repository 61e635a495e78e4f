import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa, { type Context } from 'koa';
import { ROLE_CHECK_PATHS, roleCheckStatus } from '../../domain/collectors/routing.js';
import type { ServerState } from '../../domain/collectors/server-state.js';
import { statJson, statTable, type CollectorStat } from '../../domain/collectors/stat.js';
import type { Logger } from '../../ports/logger.js';

/** The JSON body of /reload. */
export interface ReloadResult {
  readonly status: 'success' | 'error';
  readonly message: string;
  /** ISO 8601. */
  readonly timestamp: string;
}

/** What the exporter's HTTP API needs from the exporter. Every member but scrape/reload answers at once. */
export interface ExporterApi {
  readonly state: ServerState;
  readonly ready: boolean;
  /** The metrics exposition text (bytes: UTF-8). */
  scrape(): Promise<Buffer | string>;
  reload(): Promise<ReloadResult>;
  explain(): string;
  stats(): CollectorStat[];
}

/** Settings of the exporter's HTTP API. */
export interface ExporterHttpOptions {
  readonly telemetryPath: string;
}

const METRICS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';

type Handler = (ctx: Context) => Promise<void> | void;

interface Route {
  readonly methods: readonly string[];
  readonly handler: Handler;
}

function text(ctx: Context, status: number, body: string): void {
  ctx.status = status;
  ctx.type = TEXT_TYPE;
  ctx.body = body;
}

/** Paths the API serves besides the telemetry path (the telemetry path must not shadow one). */
export function reservedPaths(): string[] {
  return [...Object.keys(ROLE_CHECK_PATHS), '/', '/liveness', '/readiness', '/reload', '/explain', '/stat'];
}

function routes(api: ExporterApi, opts: ExporterHttpOptions): Map<string, Route> {
  const table = new Map<string, Route>();
  const get = (path: string, handler: Handler) => table.set(path, { methods: ['GET', 'HEAD'], handler });

  get(opts.telemetryPath, async (ctx) => {
    const body = await api.scrape();
    ctx.status = 200;
    ctx.type = METRICS_TYPE;
    ctx.body = body;
  });
  for (const [path, check] of Object.entries(ROLE_CHECK_PATHS)) {
    get(path, (ctx) => {
      const status = api.state.status;
      text(ctx, roleCheckStatus(check, status), `${status}\n`);
    });
  }
  get('/liveness', (ctx) => text(ctx, 200, 'alive\n'));
  get('/readiness', (ctx) => {
    const status = api.state.status;
    if (api.ready) text(ctx, 200, `${status}\n`);
    else text(ctx, 503, `${status === 'primary' || status === 'replica' ? 'starting' : status}\n`);
  });
  table.set('/reload', {
    methods: ['GET', 'POST'],
    handler: async (ctx) => {
      const result = await api.reload();
      ctx.status = result.status === 'success' ? 200 : 500;
      ctx.body = result;
    },
  });
  get('/explain', (ctx) => text(ctx, 200, api.explain()));
  get('/stat', (ctx) => {
    const format = ctx.query['format'];
    if (format === 'json') {
      ctx.status = 200;
      ctx.body = statJson(api.stats());
    } else if (format === undefined || format === 'text') text(ctx, 200, statTable(api.stats()));
    else text(ctx, 400, `unknown format ${JSON.stringify(format)}: expected text or json\n`);
  });
  get('/', (ctx) =>
    text(ctx, 200, ['warden-exporter', '', `${opts.telemetryPath}  Prometheus metrics`, '/up /health /read /primary /replica (and aliases)  role checks', '/liveness /readiness  probes', '/reload  reload the collectors (GET or POST)', '/explain  the collectors and their status', '/stat  collector statistics (?format=json)', ''].join('\n')),
  );
  return table;
}

/**
 * The exporter's Koa app: a flat path table (no pattern matching on the hot /metrics path).
 * Unknown paths 404; a known path with another method 405 with Allow.
 */
export function createExporterApp(api: ExporterApi, opts: ExporterHttpOptions, logger: Logger): Koa {
  const table = routes(api, opts);
  const app = new Koa();
  app.silent = true;
  app.on('error', (err: Error) => logger.warn('exporter http error', { error: err.message }));
  app.use(async (ctx) => {
    const route = table.get(ctx.path);
    if (!route) return text(ctx, 404, 'not found\n');
    if (!route.methods.includes(ctx.method)) {
      ctx.set('Allow', route.methods.filter((m) => m !== 'HEAD').join(', '));
      return text(ctx, 405, 'method not allowed\n');
    }
    try {
      await route.handler(ctx);
    } catch (e) {
      logger.error('exporter request failed', { path: ctx.path, error: (e as Error).message });
      text(ctx, 500, `internal error: ${(e as Error).message}\n`);
    }
  });
  return app;
}

/** A listening exporter HTTP server. */
export interface ExporterHttpServer {
  readonly server: Server;
  /** The bound address (useful with port 0). */
  readonly address: AddressInfo;
  close(): Promise<void>;
}

/** Listens on host:port (host undefined: every interface). Rejects when the port cannot be bound. */
export async function listenExporter(app: Koa, host: string | undefined, port: number): Promise<ExporterHttpServer> {
  const server = createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
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
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
