import { expect } from 'chai';
import { ClusterKey } from '../../../../src/adapters/cluster-store/keys.js';
import { statusOfCode, type AgentApiErrorCode } from '../../../../src/adapters/http/errors.js';
import { requestTarget } from '../../../../src/adapters/http/health-fast-path.js';
import { HEALTH_PATHS } from '../../../../src/domain/cluster/rules/health.js';
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
  jsonText,
  mangleTarget,
  ProcessEvents,
  protocolHeaders,
  Random,
  RawConnection,
  RawJson,
  randomText,
  wireBytes,
  type NextResult,
  type RawResponse,
  type WireRequest,
} from './fuzz-kit.js';
import { clusterView, memberJson, primaryFacts, replicaFacts, snapshot, startApi, type ApiHarness } from './support.js';

/**
 * Generative fuzzing of the agent's REST API on its real listener, over the fake adapters:
 * every documented method and path (and unknown ones, odd spellings, absolute forms, very
 * long targets), random query strings, bodies (valid-shaped with mutated types, unknown
 * members, deep nesting, huge strings, non-JSON, truncated, invalid UTF-8, over the limit,
 * chunked) and headers (framing mismatches, Expect, Authorization garbage against a server
 * with Basic auth, an allowlist). The rule checked on every answer: no 5xx but 503 on a
 * health path (or a documented 503 refusal with its JSON error), every 4xx a JSON
 * `{error, message}` (HEAD, and OPTIONS on health paths, carry no body), 401 only with auth
 * configured, the connection and the server still answering a valid request, no uncaught
 * exception, no unhandled rejection, no "unexpected failure" log line.
 *
 * The seed is fresh each run; a failure prints it and the exact bytes of each failing request.
 * Replay: WARDEN_FUZZ_SEED=<seed> npx mocha test/unit/adapters/http/fuzz.test.ts
 * (WARDEN_FUZZ_CASES=<n> for a longer run).
 */

const SEED = fuzzSeed();
const CASES = fuzzCases(2000);
const ANSWER_MS = 3000;

const AUTH_USER = 'admin';
const AUTH_PASSWORD = 's3cret';
const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;

/** The servers a case may go to: what differs is what may legitimately refuse it. */
type VariantName = 'replica' | 'leader_auth' | 'allowlist';
interface Variant {
  readonly name: VariantName;
  readonly api: ApiHarness;
  readonly port: number;
  readonly auth: boolean;
  readonly allowlist: boolean;
  /** Error log lines already checked. */
  errorLines: number;
}

const HEALTH = Object.keys(HEALTH_PATHS);
const GET_PATHS = ['/node', '/cluster', '/history', '/metrics', '/events', '/ui', '/ui/data', '/failsafe', '/config'];
const ACTION_PATHS = ['/switchover', '/failover', '/restart', '/reload', '/reinitialize', '/failsafe', '/config'];
const UNKNOWN_PATHS = ['/nope', '/primaryx', '/api/primary', '/node/x', '/metrics/x', '/config/x', '/.env', '/favicon.ico', '/switchover/now', '/ui/data/x', '/%2e%2e/etc/passwd', '/../primary', '/prim', '/replicas', '/HEALTHZ'];

const HEALTH_KEYS = new Set(HEALTH);

/** The route a request target reaches, as the route table normalises it (case, one trailing slash). */
function routeKey(target: string): string {
  const { path } = requestTarget(target);
  const lower = path.toLowerCase();
  return lower.length > 1 && lower.endsWith('/') ? lower.slice(0, -1) : lower;
}

function isHealthRoute(target: string): boolean {
  try {
    return HEALTH_KEYS.has(routeKey(target));
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------- values

const FUTURE = '2030-01-01T01:00:00+00:00';
const STRINGS = [
  '',
  ' ',
  'node0',
  'node1',
  'node2',
  'nodeX',
  'é',
  '\u0000',
  '\ud800',
  '\u2028',
  '😀',
  FUTURE,
  '2030-01-01T01:00:00Z',
  '2029-06-01T00:00:00Z',
  '2030-01-01T01:00:00',
  'now',
  'tomorrow',
  '2030-13-45T99:99:99Z',
  '+275760-09-13T00:00:00.000Z',
  '-271821-04-20T00:00:00Z',
  '9999-12-31T23:59:59.999+14:00',
  '2030-01-01T01:00:00+99:99',
  '30s',
  '5min',
  '500ms',
  '1h',
  '0s',
  '-1',
  '1e999',
  '1e308s',
  '99999999999999999999h',
  '15.4',
  '15',
  '16.0.1',
  '1.2.3.4.5',
  'primary',
  'replica',
  'standby_leader',
  'http://127.0.0.1:8010',
  'quorum',
  '1MB',
  '10mb',
  'true',
  'null',
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '%s%n%x',
  '__proto__',
];
const NUMBERS: unknown[] = [0, 1, -1, 0.5, 30, 1e6, 2 ** 31, 2 ** 53, -(2 ** 53), 1.7976931348623157e308, 5e-324, new RawJson('1e999'), new RawJson('-1e999'), new RawJson('1E+2'), new RawJson('-0'), new RawJson('123456789012345678901234567890'), new RawJson('0.0000000000000000000000000001')];
const KEYS = ['leader', 'candidate', 'scheduled_at', 'dry_run', 'timeout', 'schedule', 'role', 'db_version', 'restart_pending', 'force', 'from-leader', 'from_leader', 'name', 'members', 'ttl', 'loop_wait', 'pause', 'db', 'parameters', 'x', '', 'é', '__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'a'.repeat(300)];

function randomString(rng: Random): string {
  if (rng.chance(0.1)) return randomText(rng, rng.int(1, rng.chance(0.2) ? 20_000 : 40), 'abcxyz0123456789 -_:./é😀\u0000"\\');
  return rng.pick(STRINGS);
}

function randomJson(rng: Random, depth = 0): unknown {
  const kind = rng.weighted({ null: 1, bool: 1, number: 2, string: 3, array: depth < 4 ? 1 : 0, object: depth < 4 ? 2 : 0 });
  switch (kind) {
    case 'null':
      return null;
    case 'bool':
      return rng.chance(0.5);
    case 'number':
      return rng.pick(NUMBERS);
    case 'string':
      return randomString(rng);
    case 'array':
      return Array.from({ length: rng.int(0, 4) }, () => randomJson(rng, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = rng.int(0, 4); i > 0; i--) o[rng.pick(KEYS)] = randomJson(rng, depth + 1);
      return o;
    }
  }
}

function maybe<T>(rng: Random, p: number, v: () => T): T | undefined {
  return rng.chance(p) ? v() : undefined;
}

function defined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

const MEMBERS = ['node0', 'node1', 'node2', 'nodeX'];
const TIMES = [FUTURE, '2030-01-01T00:30:00Z', '2029-06-01T00:00:00Z', '2030-01-01T01:00:00', 'garbage', '+275760-09-13T00:00:00.000Z', '2030-02-30T00:00:00Z', '2031-01-01T00:00:00.123456789+01:00'];

const CONFIG_PIECES: (() => Record<string, unknown>)[] = [
  () => ({ ttl: 30 }),
  () => ({ loop_wait: 10, retry_timeout: 10 }),
  () => ({ maximum_lag_on_failover: '1MB' }),
  () => ({ maximum_lag_on_syncnode: -1 }),
  () => ({ synchronous_mode: 'quorum', synchronous_node_count: 2 }),
  () => ({ synchronous_mode: true, synchronous_mode_strict: false }),
  () => ({ db: { parameters: { max_connections: 100, wal_level: 'replica', work_mem: '4MB' }, use_pg_rewind: true, use_slots: true } }),
  () => ({ db: { parameters: { port: 5433 } } }),
  () => ({ slots: { s1: { type: 'physical' }, s2: { type: 'logical', database: 'postgres', plugin: 'pgoutput' } } }),
  () => ({ ignore_slots: [{ name: 'x', type: 'logical' }] }),
  () => ({ standby_cluster: { host: '10.0.0.1', port: 5432, create_replica_methods: ['basebackup'] } }),
  () => ({ standby_cluster: null }),
  () => ({ pause: true }),
  () => ({ pause: null }),
  () => ({ member_slots_ttl: '30min' }),
  () => ({ failsafe_mode: true, check_timeline: true }),
  () => ({ primary_start_timeout: 300, primary_stop_timeout: 0 }),
  () => ({ max_timelines_history: 0, preferred_leader_delay: 5 }),
];

/** A body the endpoint would accept, or nearly. */
function validShape(rng: Random, route: string, method: string): Record<string, unknown> {
  switch (route) {
    case '/switchover':
    case '/failover':
      if (method === 'DELETE') return {};
      return defined({
        leader: maybe(rng, route === '/switchover' ? 0.85 : 0.3, () => rng.pick(MEMBERS)),
        candidate: maybe(rng, route === '/failover' ? 0.85 : 0.5, () => rng.pick(MEMBERS)),
        scheduled_at: maybe(rng, 0.3, () => rng.pick(TIMES)),
        dry_run: maybe(rng, 0.5, () => rng.chance(0.7)),
      });
    case '/restart':
      if (method === 'DELETE') return {};
      return defined({
        restart_pending: maybe(rng, 0.3, () => rng.chance(0.5)),
        role: maybe(rng, 0.3, () => rng.pick(['primary', 'standby_leader', 'replica'])),
        db_version: maybe(rng, 0.3, () => rng.pick(['15.4', '14', '16.0.1', '99.99'])),
        timeout: maybe(rng, 0.3, () => rng.pick<unknown>([30, '30s', '5min', '500ms', '1h', 0.001, 2_147_483])),
        schedule: maybe(rng, 0.2, () => rng.pick(TIMES)),
      });
    case '/reinitialize':
      return defined({ force: maybe(rng, 0.5, () => rng.chance(0.5)), 'from-leader': maybe(rng, 0.3, () => rng.chance(0.5)), from_leader: maybe(rng, 0.2, () => rng.chance(0.5)) });
    case '/failsafe':
      return { name: rng.pick(MEMBERS), members: Object.fromEntries(MEMBERS.slice(0, rng.int(0, 3)).map((m, i) => [m, `http://127.0.0.1:${8008 + i}`])) };
    case '/config': {
      const o: Record<string, unknown> = {};
      for (let i = rng.int(method === 'PUT' ? 0 : 1, 3); i > 0; i--) Object.assign(o, rng.pick(CONFIG_PIECES)());
      return o;
    }
    default:
      return {};
  }
}

/** One random change somewhere in `v` (an object or array, changed in place); returns the new root. */
function mutate(rng: Random, root: unknown): unknown {
  const containers: unknown[] = [];
  const walk = (v: unknown, depth: number) => {
    if (v !== null && typeof v === 'object' && !(v instanceof RawJson) && depth < 6) {
      containers.push(v);
      for (const x of Object.values(v as object)) walk(x, depth + 1);
    }
  };
  walk(root, 0);
  if (containers.length === 0 || rng.chance(0.05)) return randomJson(rng);
  const target = rng.pick(containers) as Record<string, unknown>;
  const keys = Object.keys(target);
  const pickKey = () => (keys.length && rng.chance(0.7) ? rng.pick(keys) : Array.isArray(target) ? String(target.length) : rng.pick(KEYS));
  switch (rng.weighted({ retype: 5, unknown: 3, remove: 2, proto: 1, deep: 1, number: 2, bigString: 1 })) {
    case 'retype':
      target[pickKey()] = randomJson(rng, 2);
      break;
    case 'unknown':
      if (Array.isArray(target)) target.push(randomJson(rng, 2));
      else target[rng.pick(['unknown', 'extra', 'x', 'leaderr', 'candiate', 'TTL', 'Leader'])] = randomJson(rng, 2);
      break;
    case 'remove':
      if (keys.length) delete target[rng.pick(keys)];
      break;
    case 'proto':
      // Own properties named like prototype members, written as JSON keys (arrays keep their own: their methods read `constructor`).
      if (Array.isArray(target)) break;
      Object.defineProperty(target, rng.pick(['__proto__', 'constructor', 'prototype']), { value: rng.chance(0.5) ? { polluted: true } : null, enumerable: true, configurable: true, writable: true });
      break;
    case 'deep': {
      let inner: unknown = randomJson(rng, 3);
      for (let i = rng.int(10, 1000); i > 0; i--) inner = rng.chance(0.5) ? [inner] : { a: inner };
      target[pickKey()] = inner;
      break;
    }
    case 'number':
      target[pickKey()] = rng.pick(NUMBERS);
      break;
    case 'bigString':
      target[pickKey()] = 'x'.repeat(rng.int(1000, 60_000));
      break;
  }
  return root;
}

const NON_JSON = ['{', '{"leader":', '{"a":1,}', "{'a':1}", '{a:1}', 'NaN', 'undefined', '{}{}', '{} x', '[]', 'null', '0', '-1', '"str"', 'true', '\uFEFF{}', '/* c */ {}', '{"a":1}\u0000', 'leader=node0&candidate=node1', '<xml/>', '{"a":"\\x41"}', '{"a":"\\ud800"}', '{"a":01}', '{"a":.5}', '{"a":+1}', '{"a":Infinity}', '{"a" 1}', ' \t\r\n ', '\u00a0{}'];

const BAD_UTF8 = [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc0, 0xaf], [0xe9], [0xf4, 0x90, 0x80, 0x80], [0xe2, 0x82]];

/** A request body and what it is. */
function bodyFor(rng: Random, route: string, method: string): { bytes: Buffer; note: string } {
  const kind = rng.weighted({ valid: 25, mutated: 30, randomJson: 8, nonJson: 10, truncated: 5, badUtf8: 5, empty: 8, huge: 4, limit: 2, deep: 2, manyKeys: 1, utf16: 1 });
  const text = (s: string, note: string) => ({ bytes: Buffer.from(s, 'utf8'), note });
  switch (kind) {
    case 'valid':
      return text(jsonText(validShape(rng, route, method)), 'valid-shaped');
    case 'mutated': {
      let v: unknown = validShape(rng, route, method);
      const n = rng.int(1, 3);
      for (let i = 0; i < n; i++) v = mutate(rng, v);
      return text(jsonText(v), `mutated x${n}`);
    }
    case 'randomJson':
      return text(jsonText(randomJson(rng)), 'random JSON');
    case 'nonJson':
      return text(rng.pick(NON_JSON), 'not JSON');
    case 'truncated': {
      const full = jsonText(validShape(rng, route, method));
      return text(full.slice(0, rng.int(0, Math.max(0, full.length - 1))), 'truncated JSON');
    }
    case 'badUtf8': {
      const bad = Buffer.from(rng.pick(BAD_UTF8));
      const key = rng.pick(['leader', 'candidate', 'name', 'schedule', 'x']);
      return rng.chance(0.5)
        ? { bytes: Buffer.concat([Buffer.from(`{"${key}":"`), bad, Buffer.from('"}')]), note: 'invalid UTF-8 in a string' }
        : { bytes: Buffer.concat([Buffer.from('{"'), bad, Buffer.from('":1}')]), note: 'invalid UTF-8 in a key' };
    }
    case 'empty':
      return text(rng.pick(['', ' ', '\r\n', '\t']), 'empty');
    case 'huge': {
      const n = rng.pick([60_000, 65_000, 70_000, 200_000, 1_100_000]);
      return text(`{"${rng.pick(['leader', 'x', 'ttl'])}":"${'x'.repeat(n)}"}`, `huge string ${n}`);
    }
    case 'limit': {
      // `{}` padded with spaces to exactly the limit, or one byte over.
      const n = 64 * 1024 + rng.int(-1, 1);
      return text(`{}${' '.repeat(n - 2)}`, `padded to ${n} bytes`);
    }
    case 'deep': {
      const n = rng.pick([100, 3000, 10_000, 30_000]);
      if (rng.chance(0.5)) return text(`${'['.repeat(n)}${']'.repeat(n)}`, `array nested ${n}`);
      const depth = Math.min(n, 12_000);
      const key = route === '/config' ? rng.pick(['db', 'slots', 'standby_cluster', 'x']) : 'a';
      return text(`{"${key}":${'{"a":'.repeat(depth)}1${'}'.repeat(depth + 1)}`, `object nested ${depth} under ${key}`);
    }
    case 'manyKeys': {
      const n = rng.int(100, 6000);
      return text(`{${Array.from({ length: n }, (_, i) => `"k${i}":${i}`).join(',')}}`, `${n} keys`);
    }
    default:
      return { bytes: Buffer.from(jsonText(validShape(rng, route, method)), 'utf16le'), note: 'UTF-16LE JSON' };
  }
}

// ---------------------------------------------------------------- targets

const QUERY_KEYS = ['lag', 'lag', 'replication_state', 'mode', 'fresh', 'format', 'last_event_id', 'tag_nofailover', 'tag_x', 'tag_', 'tag_%C3%A9', 'unknown', '', '__proto__', 'constructor', 'LAG', 'lag[]', 'toString', 'hasOwnProperty'];
const QUERY_VALUES = [
  '',
  '1',
  '0',
  '-1',
  'abc',
  '1e999',
  '10MB',
  '10mb',
  '1.5GB',
  '16kB',
  '1.5',
  '99999999999999999999999',
  '9007199254740993',
  '8388607TB',
  '8388608TB',
  '0x10',
  '%201',
  '1%20MB',
  'NaN',
  'Infinity',
  '-0',
  '1B',
  'streaming',
  'in archive recovery',
  'in+archive+recovery',
  'in%20archive%20recovery',
  'apply',
  'write',
  'true',
  'false',
  'json',
  'sse',
  '%C3%A9',
  '\u00c3\u00a9',
  '%FF',
  '%',
  '%E0%A4%A',
  '%F0%9F%98%80',
  '%00',
  '%3D%26',
];

function queryString(rng: Random): string {
  const n = rng.int(1, 4);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = rng.pick(QUERY_KEYS);
    const value = rng.chance(0.05) ? 'x'.repeat(rng.int(100, 6000)) : rng.pick(QUERY_VALUES);
    parts.push(rng.weighted({ pair: 10, bare: 1, emptyKey: 1, doubleAmp: 1 }) === 'pair' ? `${key}=${value}` : rng.pick([key, `=${value}`, '', `${key}==${value}`]));
    if (rng.chance(0.15)) parts.push(`${key}=${rng.pick(QUERY_VALUES)}`);
  }
  return parts.join(rng.chance(0.9) ? '&' : rng.pick(['&&', ';']));
}

const METHODS = { GET: 30, HEAD: 8, OPTIONS: 8, POST: 18, PUT: 8, PATCH: 10, DELETE: 8, odd: 3 };
const ODD_METHODS = ['TRACE', 'PROPFIND', 'get', 'M-SEARCH', 'PURGE', 'CONNECT', 'X'.repeat(100)];

/** The paths that take each method (OPTIONS: every one). */
const ACCEPTING: Readonly<Record<string, readonly string[]>> = {
  GET: [...HEALTH, ...HEALTH, ...GET_PATHS],
  HEAD: [...HEALTH, ...GET_PATHS],
  OPTIONS: [...HEALTH, ...HEALTH, ...GET_PATHS, ...ACTION_PATHS],
  POST: ['/switchover', '/failover', '/restart', '/reload', '/reinitialize', '/failsafe'],
  PUT: ['/config'],
  PATCH: ['/config'],
  DELETE: ['/switchover', '/restart'],
};

function pathFor(rng: Random, method: string): string {
  const accepting = ACCEPTING[method];
  if (accepting && rng.chance(0.75)) return rng.pick(accepting);
  return rng.pick(rng.chance(0.7) ? [...HEALTH, ...GET_PATHS, ...ACTION_PATHS] : UNKNOWN_PATHS);
}

const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'garbage', '', '*/*'];
const ACCEPTS = ['application/json', '*/*', 'text/html', 'text/event-stream', 'application/openmetrics-text; version=1.0.0', 'garbage;;;q=x', '', 'a/b, c/d;q=0.1, */*;q=0'];

function authorization(rng: Random, variant: Variant): string | undefined {
  const pool = variant.auth ? { right: 5, wrong: 2, garbage: 3, none: 2 } : { right: 0, wrong: 1, garbage: 1, none: 12 };
  switch (rng.weighted(pool)) {
    case 'right':
      return basic(`${AUTH_USER}:${AUTH_PASSWORD}`);
    case 'wrong':
      return basic(rng.pick([`${AUTH_USER}:wrong`, `root:${AUTH_PASSWORD}`, `${AUTH_USER}:`, ':', '', 'é:é', `${AUTH_USER}:${AUTH_PASSWORD}x`]));
    case 'garbage':
      return rng.pick(['Basic', 'Basic ', 'Basic !!!', 'Basic ====', 'Bearer abc', 'basic YWRtaW46czNjcmV0', `Basic ${'A'.repeat(5000)}`, 'Basic \u00e9\u00e9', 'Digest username="admin"', `Basic ${basic('x')}`]);
    default:
      return undefined;
  }
}

/** A whole request. */
function generate(rng: Random, variant: Variant): WireRequest {
  let method = rng.weighted(METHODS) as string;
  if (method === 'odd') method = rng.pick(ODD_METHODS);
  const path = pathFor(rng, method);
  const route = path.toLowerCase();
  const { target: mangled, note: targetNote } = mangleTarget(rng, path, variant.port);
  const wantsQuery = HEALTH_KEYS.has(path) || path === '/node' || path === '/events' ? rng.chance(0.5) : rng.chance(0.12);
  const target = wantsQuery && !mangled.includes('#') && mangled !== '*' ? `${mangled}?${rng.chance(0.03) ? '' : queryString(rng)}` : mangled;

  const headers: [string, string][] = [];
  const notes: string[] = [targetNote];
  const version = rng.chance(0.05) ? 'HTTP/1.0' : 'HTTP/1.1';
  if (rng.chance(0.4)) headers.push(['Content-Type', rng.pick(CONTENT_TYPES)]);
  if (rng.chance(0.3)) headers.push(['Accept', rng.pick(ACCEPTS)]);
  protocolHeaders(rng, variant.port, headers, notes);
  const auth = authorization(rng, variant);
  if (auth !== undefined) headers.push(['Authorization', auth]);
  if (rng.chance(0.04)) headers.push(['Last-Event-ID', rng.pick(['', '0', '-1', 'abc', '999999999999999999999', 'x'.repeat(3000)])]);
  if (rng.chance(0.03)) headers.push(['Accept-Encoding', rng.pick(['gzip', 'br;q=1.0, gzip;q=0.8', 'x'])]);
  if (rng.chance(0.02)) headers.push(['X-Forwarded-For', '10.1.2.3']);
  const hasBody = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method) ? rng.chance(0.85) : rng.chance(0.08);
  const framed = hasBody ? frame(rng, headers, notes, bodyFor(rng, route, method)) : emptyFrame(rng, headers, notes);
  return { method, target, version, headers, note: notes.filter(Boolean).join(', ') || 'plain', ...framed };
}

// ---------------------------------------------------------------- checks

const ERROR_CODE_OK = /^[a-z][a-z0-9_]*$/;

/** What is wrong with `res`, the answer to `req` on `variant` (empty: nothing). */
function problemsOf(req: WireRequest, res: RawResponse, variant: Variant, method: string): string[] {
  const out: string[] = [];
  const status = res.status;
  const type = res.headers['content-type'] ?? '';
  const health = isHealthRoute(req.target);
  const bodyText = res.body.toString('utf8');
  let json: unknown;
  let parsed = false;
  if (res.body.length > 0 && type.startsWith('application/json')) {
    try {
      json = JSON.parse(bodyText);
      parsed = true;
    } catch {
      out.push('a JSON content type with a body that is not JSON');
    }
  }
  const errorBody = parsed && json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as { error?: unknown; message?: unknown }) : null;
  const isErrorBody = errorBody !== null && typeof errorBody.error === 'string' && ERROR_CODE_OK.test(errorBody.error) && typeof errorBody.message === 'string' && errorBody.message.length > 0;
  if (!Number.isInteger(status)) return ['no parseable status line'];

  if (status >= 500) {
    if (status !== 503) out.push(`${status}: no 5xx but 503`);
    else if (method === 'HEAD') {
      // No body to tell a documented refusal (failsafe_unknown, dcs_unavailable) from another: the GET cases check those.
    } else if (health && ['GET', 'HEAD', 'OPTIONS'].includes(method)) {
      if (method === 'GET' && !(parsed && errorBody !== null && 'state' in errorBody)) out.push('a 503 on a health path without the status document');
    } else if (!isErrorBody) out.push('a 503 off the health paths without a JSON {error, message}');
    else if (errorBody!.error === 'internal_error') out.push('an internal_error');
    else if (statusOfCode(errorBody!.error as AgentApiErrorCode) !== 503) out.push(`a 503 with the code ${String(errorBody!.error)} (whose status is ${statusOfCode(errorBody!.error as AgentApiErrorCode)})`);
  }
  if (status >= 400 && status < 500) {
    const bodiless = method === 'HEAD' || (method === 'OPTIONS' && health);
    if (res.body.length === 0 && !bodiless) out.push(`a ${status} without a body`);
    if (res.body.length > 0 && !isErrorBody) out.push(`a ${status} whose body is not a JSON {error, message}`);
    if (isErrorBody) {
      const mapped = statusOfCode(errorBody!.error as AgentApiErrorCode) as number | undefined;
      if (mapped !== undefined && mapped !== status) out.push(`error ${String(errorBody!.error)} answered ${status}, its table says ${mapped}`);
    }
    if (status === 401) {
      if (!variant.auth) out.push('a 401 from a server without authentication');
      if (res.headers['www-authenticate'] !== 'Basic realm="svc"') out.push('a 401 without WWW-Authenticate: Basic realm="svc"');
    }
    if (status === 403 && !variant.allowlist) out.push('a 403 from a server without an allowlist');
    if (status === 405 && !res.headers['allow']) out.push('a 405 without Allow');
  }
  if (status === 200 && method === 'GET' && health && !(parsed && errorBody !== null && 'state' in errorBody)) out.push('a 200 on a health path without the status document');
  return out;
}

// ---------------------------------------------------------------- the run

async function startVariant(name: VariantName): Promise<Variant> {
  let api: ApiHarness;
  if (name === 'replica') {
    api = await startApi({ snapshot: snapshot({ facts: replicaFacts() }) });
  } else {
    const config = { ttl: 30, loop_wait: 10, retry_timeout: 10 };
    const prefill: Record<string, string> = {
      [ClusterKey.member('node0')]: memberJson('node0', { receive_lsn: 99_500_000, replay_lsn: 99_000_000 }),
      [ClusterKey.member('node1')]: memberJson('node1', { role: 'primary', xlog_location: 100_000_000 }),
      [ClusterKey.member('node2')]: memberJson('node2', { receive_lsn: 99_900_000, replay_lsn: 99_800_000 }),
      [ClusterKey.status]: JSON.stringify({ optime: 100_000_000, slots: {} }),
      [ClusterKey.leader]: 'node1',
      [ClusterKey.config]: JSON.stringify(config),
      [ClusterKey.initialize]: '7300000000000000001',
    };
    api = await startApi({
      prefill,
      snapshot: snapshot({ facts: primaryFacts(), leader: true, config, cluster: clusterView({ leader: 'node1', config }) }),
      access:
        name === 'leader_auth'
          ? { authentication: { username: AUTH_USER, password: AUTH_PASSWORD } }
          : { allowlist: ['10.1.2.3/32', 'fd00::/8'], authentication: { username: AUTH_USER, password: AUTH_PASSWORD } },
      extraHeaders: { 'X-Frame-Options': 'deny' },
    });
    api.peers.statuses.set('http://127.0.0.1:8008', snapshot({ facts: replicaFacts(), node: { name: 'node0' } }).status);
    api.peers.statuses.set('http://127.0.0.1:8010', snapshot({ facts: replicaFacts({ receivedLocation: 99_900_000, replayedLocation: 99_800_000 }), node: { name: 'node2' } }).status);
    // The members act on a switchover at once, without a new leader: the API answers without waiting out its timeout.
    api.control.onWake = async () => {
      await api.dcs.put(ClusterKey.failover, '{}');
    };
  }
  return { name, api, port: Number(new URL(api.url).port), auth: name !== 'replica', allowlist: name === 'allowlist', errorLines: 0 };
}

/** A valid request on a fresh connection: 200 with the status document, or why not. */
async function serverAnswers(port: number): Promise<string | null> {
  const conn = await RawConnection.open(port).catch((e: Error) => e);
  if (conn instanceof Error) return `cannot connect: ${conn.message}`;
  try {
    await conn.write(Buffer.from('GET /node HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    const r = await conn.next('GET', ANSWER_MS);
    if (!isResponse(r) || r.status !== 200) return `GET /node answered ${describeResponse(r)}`;
    return null;
  } finally {
    conn.destroy();
  }
}

describe('REST API: generative fuzzing of the listener (seeded; WARDEN_FUZZ_SEED replays)', function () {
  this.timeout(120_000);
  const events = new ProcessEvents();
  const variants: Variant[] = [];
  before(async () => {
    for (const name of ['replica', 'leader_auth', 'allowlist'] as const) variants.push(await startVariant(name));
    events.hook();
  });
  after(async () => {
    events.unhook();
    for (const v of variants) await v.api.close();
  });

  it(`${CASES} random requests: no 5xx but documented 503s, every 4xx a JSON error, the server keeps answering (seed ${SEED})`, async () => {
    const rng = new Random(SEED);
    const failures = new CaseLog('REST API fuzz', SEED);
    const started = Date.now();
    let requests = 0;
    const statuses = new Map<string, number>();
    for (let i = 0; i < CASES; i++) {
      const variant = rng.weighted({ replica: 50, leader_auth: 40, allowlist: 10 }) === 'replica' ? variants[0]! : rng.chance(0.8) ? variants[1]! : variants[2]!;
      const req = generate(rng, variant);
      const pieces = rng.int(1, 3);
      const label = `case ${i} on the ${variant.name} server: ${describeRequest(req)}`;
      events.current = label;
      const fail = (kind: string, detail: string) => failures.add(kind, `${kind}\n  ${label}\n  answer: ${detail}`);

      const conn = await RawConnection.open(variant.port);
      try {
        await conn.write(wireBytes(req), pieces);
        if (req.halfClose) conn.end();
        requests++;
        const first: NextResult = await conn.next(req.method, ANSWER_MS);
        if (!isResponse(first)) {
          // A client that cut its own request short may see the connection closed without an answer.
          if (first.kind === 'timeout') fail('no answer (hang)', describeResponse(first));
          else if (!req.halfClose) fail('connection closed without an answer', describeResponse(first));
        } else {
          const key = `${req.method} ${first.status}`;
          statuses.set(key, (statuses.get(key) ?? 0) + 1);
          for (const p of problemsOf(req, first, variant, req.method)) fail(p, describeResponse(first));
          if (first.stream) conn.destroy();
          const closing = /close/i.test(first.headers['connection'] ?? '') || first.stream || req.version === 'HTTP/1.0';
          if (req.trailing) {
            // The bytes after the request are parsed as more requests: each gets a proper answer (or the connection closes).
            for (let k = 0; k < 3 && !conn.closed; k++) {
              const more = await conn.next('GET', 300);
              if (!isResponse(more)) break;
              for (const p of problemsOf({ ...req, target: '/?' }, more, variant, 'GET')) fail(`after the request: ${p}`, describeResponse(more));
            }
          } else if (!closing && !req.desynced && !req.halfClose) {
            // The same connection still serves a valid request.
            await conn.write(Buffer.from('GET /node HTTP/1.1\r\nHost: x\r\n\r\n'));
            requests++;
            const next = await conn.next('GET', ANSWER_MS);
            if (!isResponse(next) || next.status !== 200) fail('the connection does not serve a valid request after this one', describeResponse(next));
          }
        }
      } finally {
        conn.destroy();
      }
      const broken = await serverAnswers(variant.port);
      requests++;
      if (broken) fail('the server stopped answering', broken);
      if (!(await connectionsDrained(variant.api.server.server))) fail('a connection stays open on the server after the client closed it', 'still open 1 s later');
      const errors = variant.api.logger.lines.filter((l) => l.level === 'error');
      if (errors.length > variant.errorLines) {
        fail('an unexpected failure was logged', JSON.stringify(errors.slice(variant.errorLines)).slice(0, 600));
        variant.errorLines = errors.length;
      }
      while (events.seen.length) fail('uncaught exception or unhandled rejection', events.seen.shift()!);
    }
    // A last look for rejections that surfaced after the last case.
    await new Promise((r) => setImmediate(r));
    while (events.seen.length) failures.add('late', events.seen.shift()!);
    const seconds = (Date.now() - started) / 1000;
    if (!failures.empty) expect.fail(failures.report());
    if (process.env['WARDEN_FUZZ_VERBOSE']) {
      console.log(`REST API fuzz: seed ${SEED}, ${CASES} cases, ${requests} requests in ${seconds.toFixed(1)} s`);
      console.log([...statuses].sort().map(([k, n]) => `${k}: ${n}`).join(', '));
    }
  });
});

