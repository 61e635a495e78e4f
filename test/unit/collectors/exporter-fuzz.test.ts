import { expect } from 'chai';
import { gunzipSync } from 'node:zlib';
import { BcryptBasicAuth } from '../../../src/adapters/http/basic-auth.js';
import { createExporterHandler, listenExporter, type ExporterHttpServer } from '../../../src/adapters/http/exporter-api.js';
import { requestTarget } from '../../../src/adapters/http/health-fast-path.js';
import { ROLE_CHECK_PATHS } from '../../../src/domain/collectors/routing.js';
import type { ServerStatus } from '../../../src/domain/collectors/server-state.js';
import {
  connectionsDrained,
  describeRequest,
  describeResponse,
  emptyFrame,
  CaseLog,
  frame,
  fuzzCases,
  fuzzSeed,
  isResponse,
  mangleTarget,
  ProcessEvents,
  protocolHeaders,
  Random,
  RawConnection,
  wireBytes,
  type NextResult,
  type RawResponse,
  type WireRequest,
} from '../adapters/http/fuzz-kit.js';
import { MemoryLogger } from './fakes.js';
import { FakeApi } from './fake-exporter-api.js';

/**
 * Generative fuzzing of the exporter's HTTP server on its real listener, over a fake exporter:
 * every path (metrics, probe, role checks, liveness/readiness, reload, explain, stat, the index,
 * unknown ones and odd spellings), random query strings, methods, bodies and framing, Accept
 * and Accept-Encoding variants, Authorization garbage against servers with basic auth. The
 * rule checked on every answer: no 5xx but 503 on a role or health check; a role check's 404
 * (up in the other role) is its plain-text status, as documented; every other 4xx a JSON
 * `{code, error}` (HEAD and OPTIONS answers carry no body); 401 only with auth; the connection
 * and the server still answering; no uncaught exception or unhandled rejection; no error
 * logged.
 *
 * Replay: WARDEN_FUZZ_SEED=<seed> npx mocha test/unit/collectors/exporter-fuzz.test.ts
 */

const SEED = fuzzSeed();
const CASES = fuzzCases(2500);
const ANSWER_MS = 3000;

// bcrypt of "s3cret" (cost 4: fast enough for a test)
const HASH = '$2b$04$YCOWfsikja5zqy.uVmVv2eWtMPm6Ffxqlv693AXY1VQPso/KO7DsO';
const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;

type VariantName = 'open' | 'auth_open_checks' | 'auth_all';
interface Variant {
  readonly name: VariantName;
  readonly http: ExporterHttpServer;
  readonly port: number;
  readonly telemetryPath: string;
  readonly auth: boolean;
  readonly logger: MemoryLogger;
  errorLines: number;
}

const ROLE_PATHS = Object.keys(ROLE_CHECK_PATHS);
const CHECK_PATHS = new Set([...ROLE_PATHS, '/liveness', '/readiness']);
const OTHER_PATHS = ['/probe', '/reload', '/explain', '/stat', '/'];
const UNKNOWN_PATHS = ['/nope', '/metrics/x', '/prom', '/metric', '/probe/db2', '/stat/json', '/favicon.ico', '/%2e%2e/', '/PRIMARY', '/Metrics'];

const QUERY_KEYS = ['target', 'target', 'format', 'lag', 'name', '', '__proto__', 'TARGET', 'format[]'];
const QUERY_VALUES = ['db2', 'db1', 'nope', '', 'json', 'text', 'xml', 'JSON', 'abc', '1e999', '10MB', '%FF', '%', '%00', '%C3%A9', '\u00c3\u00a9', 'x'.repeat(3000)];

function queryString(rng: Random): string {
  const parts: string[] = [];
  for (let i = rng.int(1, 3); i > 0; i--) {
    const key = rng.pick(QUERY_KEYS);
    parts.push(rng.chance(0.9) ? `${key}=${rng.pick(QUERY_VALUES)}` : rng.pick([key, `=${rng.pick(QUERY_VALUES)}`, '']));
  }
  return parts.join('&');
}

const ACCEPTS = ['application/openmetrics-text;version=1.0.0,text/plain;q=0.5', 'application/openmetrics-text; version=0.0.1', 'application/openmetrics-text', 'text/plain;version=0.0.4', '*/*', 'garbage;;q=', 'application/openmetrics-text;q=0', ''];
const ENCODINGS = ['gzip', 'identity', 'gzip;q=0', 'br', '*', 'gzip, deflate, br', 'x;;', ''];

function generate(rng: Random, variant: Variant): WireRequest {
  let method = rng.weighted({ GET: 50, HEAD: 10, OPTIONS: 10, POST: 12, PUT: 5, PATCH: 4, DELETE: 5, odd: 2 }) as string;
  if (method === 'odd') method = rng.pick(['TRACE', 'CONNECT', 'get', 'PROPFIND', 'X'.repeat(60)]);
  const path = rng.pick(
    rng.weighted({ metrics: 3, role: 5, other: 4, unknown: 1 }) === 'metrics'
      ? [variant.telemetryPath]
      : rng.weighted({ role: 5, other: 4, unknown: 1 }) === 'role'
        ? [...ROLE_PATHS, '/liveness', '/readiness']
        : rng.chance(0.8)
          ? OTHER_PATHS
          : UNKNOWN_PATHS,
  );
  const { target: mangled, note: targetNote } = mangleTarget(rng, path, variant.port);
  const wantsQuery = path === '/probe' ? rng.chance(0.9) : path === '/stat' ? rng.chance(0.5) : rng.chance(0.15);
  const target = wantsQuery && !mangled.includes('#') && mangled !== '*' ? `${mangled}?${rng.chance(0.05) ? '' : queryString(rng)}` : mangled;
  const headers: [string, string][] = [];
  const notes = [targetNote];
  protocolHeaders(rng, variant.port, headers, notes);
  if (rng.chance(0.4)) headers.push(['Accept', rng.pick(ACCEPTS)]);
  if (rng.chance(0.3)) headers.push(['Accept-Encoding', rng.pick(ENCODINGS)]);
  const auth = rng.weighted(variant.auth ? { right: 5, wrong: 2, garbage: 2, none: 2 } : { right: 1, wrong: 1, garbage: 1, none: 8 });
  if (auth === 'right') headers.push(['Authorization', basic('alice:s3cret')]);
  // A small pool: each new header costs one bcrypt (cached afterwards).
  else if (auth === 'wrong') headers.push(['Authorization', rng.pick([basic('alice:wrong'), basic('bob:s3cret'), basic('alice:'), basic('é:é')])]);
  else if (auth === 'garbage') headers.push(['Authorization', rng.pick(['Basic', 'Basic ', 'Basic !!!', 'Basic ====', 'Bearer x', basic('nocolon'), `Basic ${'A'.repeat(3000)}`, 'basic \u00e9'])]);
  const hasBody = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method) ? rng.chance(0.7) : rng.chance(0.05);
  const content = (): { bytes: Buffer; note: string } => {
    switch (rng.weighted({ json: 4, text: 2, bytes: 1, big: 1 })) {
      case 'json':
        return { bytes: Buffer.from(rng.pick(['{}', '{"collectors":["a"]}', '[]', 'null', '{"a":', '{"__proto__":{}}'])), note: 'JSON-ish body' };
      case 'text':
        return { bytes: Buffer.from(rng.pick(['reload', 'target=db2', ' ', ''])), note: 'text body' };
      case 'bytes':
        return { bytes: Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28]), note: 'binary body' };
      default:
        return { bytes: Buffer.alloc(rng.pick([70_000, 1_100_000]), 'x'), note: 'big body' };
    }
  };
  const framed = hasBody ? frame(rng, headers, notes, content()) : emptyFrame(rng, headers, notes);
  return { method, target, version: rng.chance(0.05) ? 'HTTP/1.0' : 'HTTP/1.1', headers, note: notes.filter(Boolean).join(', ') || 'plain', ...framed };
}

/** The route a target reaches (one trailing slash is the same path). */
function routeOf(target: string): string {
  try {
    const { path } = requestTarget(target);
    return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  } catch {
    return '(unparseable)';
  }
}

function problemsOf(req: WireRequest, res: RawResponse, variant: Variant, method: string, state: ServerStatus): string[] {
  const out: string[] = [];
  const status = res.status;
  if (!Number.isInteger(status)) return ['no parseable status line'];
  const type = res.headers['content-type'] ?? '';
  const route = routeOf(req.target);
  const check = CHECK_PATHS.has(route);
  const text = res.body.toString('utf8');
  let json: unknown;
  let parsed = false;
  if (res.body.length > 0 && type.startsWith('application/json')) {
    try {
      json = JSON.parse(text);
      parsed = true;
    } catch {
      out.push('a JSON content type with a body that is not JSON');
    }
  }
  const obj = parsed && json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : null;
  const isError = obj !== null && typeof obj['code'] === 'string' && /^[a-z][a-z0-9_]*$/.test(obj['code']) && typeof obj['error'] === 'string' && obj['error'] !== '';
  // A role check's own answer: its status as text (200, 404 up in the other role, 503 down).
  const checkAnswer = check && type.startsWith('text/plain') && (text === `${state}\n` || text === 'starting\n' || text === 'alive\n');
  const bodiless = method === 'HEAD' || method === 'OPTIONS';

  if (status >= 500 && !(status === 503 && check && (checkAnswer || bodiless))) out.push(`a ${status} off the role and health checks`);
  if (status >= 400 && status < 500) {
    const roleAnswer = status === 404 && check && (checkAnswer || (bodiless && res.body.length === 0));
    if (!roleAnswer) {
      if (res.body.length === 0 && !bodiless) out.push(`a ${status} without a body`);
      if (res.body.length > 0 && !isError) out.push(`a ${status} whose body is not a JSON {code, error}`);
    }
    if (status === 401) {
      if (!variant.auth) out.push('a 401 from a server without basic auth');
      if (!/^Basic realm=/.test(res.headers['www-authenticate'] ?? '')) out.push('a 401 without a Basic challenge');
    }
    if (status === 405 && !res.headers['allow']) out.push('a 405 without Allow');
  }
  if (status === 200 && method === 'GET' && route === variant.telemetryPath && res.body.length > 0) {
    const body = res.headers['content-encoding'] === 'gzip' ? gunzipSync(res.body).toString() : text;
    if (!body.includes('db_up')) out.push('metrics without the samples');
  }
  return out;
}

async function serverAnswers(port: number, auth: boolean): Promise<string | null> {
  const conn = await RawConnection.open(port).catch((e: Error) => e);
  if (conn instanceof Error) return `cannot connect: ${conn.message}`;
  try {
    await conn.write(Buffer.from(`GET /explain HTTP/1.1\r\nHost: x\r\n${auth ? `Authorization: ${basic('alice:s3cret')}\r\n` : ''}Connection: close\r\n\r\n`));
    const r = await conn.next('GET', ANSWER_MS);
    if (!isResponse(r) || r.status !== 200) return `GET /explain answered ${describeResponse(r)}`;
    return null;
  } finally {
    conn.destroy();
  }
}

describe('exporter HTTP API: generative fuzzing of the listener (seeded; WARDEN_FUZZ_SEED replays)', function () {
  this.timeout(120_000);
  const events = new ProcessEvents();
  const api = new FakeApi();
  const variants: Variant[] = [];
  before(async () => {
    const auth = new BcryptBasicAuth({ alice: HASH });
    const settings: [VariantName, Parameters<typeof createExporterHandler>[1]][] = [
      ['open', { telemetryPath: '/metrics' }],
      ['auth_open_checks', { telemetryPath: '/metrics', auth, openHealthChecks: true, headers: { 'X-Frame-Options': 'deny' } }],
      ['auth_all', { telemetryPath: '/prom', auth, openMetrics: false }],
    ];
    for (const [name, opts] of settings) {
      const logger = new MemoryLogger();
      const http = await listenExporter(createExporterHandler(api, opts, logger), '127.0.0.1', 0);
      variants.push({ name, http, port: http.address.port, telemetryPath: opts.telemetryPath, auth: opts.auth !== undefined, logger, errorLines: 0 });
    }
    events.hook();
  });
  after(async () => {
    events.unhook();
    for (const v of variants) await v.http.close();
  });

  it(`${CASES} random requests: no 5xx but 503 on checks, every other 4xx a JSON error, the server keeps answering (seed ${SEED})`, async () => {
    const rng = new Random(SEED);
    const failures = new CaseLog('exporter fuzz', SEED);
    const statuses = new Map<string, number>();
    const started = Date.now();
    let requests = 0;
    for (let i = 0; i < CASES; i++) {
      const variant = variants[Number(rng.weighted({ 0: 4, 1: 4, 2: 2 }))]!;
      api.status = rng.pick<ServerStatus>(['primary', 'replica', 'down', 'starting']);
      api.ready = rng.chance(0.8);
      const req = generate(rng, variant);
      const label = `case ${i} on the ${variant.name} server (database ${api.status}${api.ready ? '' : ', not ready'}): ${describeRequest(req)}`;
      events.current = label;
      const fail = (kind: string, detail: string) => failures.add(kind, `${kind}\n  ${label}\n  answer: ${detail}`);
      const conn = await RawConnection.open(variant.port);
      try {
        await conn.write(wireBytes(req), rng.int(1, 3));
        if (req.halfClose) conn.end();
        requests++;
        const first: NextResult = await conn.next(req.method, ANSWER_MS);
        if (!isResponse(first)) {
          if (first.kind === 'timeout') fail('no answer (hang)', describeResponse(first));
          else if (!req.halfClose) fail('connection closed without an answer', describeResponse(first));
        } else {
          const key = `${req.method} ${first.status}`;
          statuses.set(key, (statuses.get(key) ?? 0) + 1);
          for (const p of problemsOf(req, first, variant, req.method, api.status)) fail(p, describeResponse(first));
          const closing = /close/i.test(first.headers['connection'] ?? '') || req.version === 'HTTP/1.0';
          if (req.trailing) {
            for (let k = 0; k < 3 && !conn.closed; k++) {
              const more = await conn.next('GET', 300);
              if (!isResponse(more)) break;
              for (const p of problemsOf({ ...req, target: '/nope' }, more, variant, 'GET', api.status)) fail(`after the request: ${p}`, describeResponse(more));
            }
          } else if (!closing && !req.desynced && !req.halfClose) {
            await conn.write(Buffer.from('GET /liveness HTTP/1.1\r\nHost: x\r\n\r\n'));
            requests++;
            const next = await conn.next('GET', ANSWER_MS);
            // /liveness is open on the servers that leave the checks open; 401 on the other.
            if (!isResponse(next) || next.status !== (variant.name === 'auth_all' ? 401 : 200)) fail('the connection does not serve a valid request after this one', describeResponse(next));
          }
        }
      } finally {
        conn.destroy();
      }
      const broken = await serverAnswers(variant.port, variant.auth);
      requests++;
      if (broken) fail('the server stopped answering', broken);
      if (!(await connectionsDrained(variant.http.server))) fail('a connection stays open on the server after the client closed it', 'still open 1 s later');
      const errors = variant.logger.lines.filter((l) => l.level === 'error');
      if (errors.length > variant.errorLines) {
        fail('an error was logged', JSON.stringify(errors.slice(variant.errorLines)).slice(0, 600));
        variant.errorLines = errors.length;
      }
      while (events.seen.length) fail('uncaught exception or unhandled rejection', events.seen.shift()!);
    }
    await new Promise((r) => setImmediate(r));
    while (events.seen.length) failures.add('late', events.seen.shift()!);
    if (!failures.empty) expect.fail(failures.report());
    if (process.env['WARDEN_FUZZ_VERBOSE']) {
      console.log(`exporter fuzz: seed ${SEED}, ${CASES} cases, ${requests} requests in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      console.log([...statuses].sort().map(([k, n]) => `${k}: ${n}`).join(', '));
    }
  });
});
