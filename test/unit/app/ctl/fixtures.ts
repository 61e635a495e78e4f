import type { HistoryLine, Member } from '../../../../src/domain/cluster/model/cluster.js';
import { failoverToJson, historyToJson, memberToJson, statusToJson, syncToJson } from '../../../../src/adapters/cluster-store/codec.js';
import { InMemoryClusterStore } from '../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { WarningLogger } from '../../../../src/app/ctl/warning-logger.js';
import { ClusterKey } from '../../../../src/adapters/cluster-store/keys.js';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { InMemoryKeyValue, InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import type { CtlContext, SqlResult, SqlTarget } from '../../../../src/app/ctl/context.js';
import { RestUnreachableError } from '../../../../src/app/ctl/errors.js';
import type { HttpMethod, RestClient, RestRequestOptions, RestResponse } from '../../../../src/app/ctl/rest-client.js';

/** One request the fake REST client received. */
export interface RestCall {
  readonly apiUrl: string;
  readonly method: HttpMethod;
  readonly path: string;
  readonly body: unknown;
  readonly opts?: RestRequestOptions;
}

type Route = RestResponse | 'unreachable' | ((call: RestCall) => RestResponse | 'unreachable');

/** A RestClient answering from routes keyed `METHOD path` (any member) or `METHOD apiUrl path`. */
export class FakeRest implements RestClient {
  readonly calls: RestCall[] = [];
  private readonly routes = new Map<string, Route>();

  /** Answers `method path` on every member, or only on `apiUrl` when given. */
  on(method: HttpMethod, path: string, route: Route, apiUrl?: string): this {
    this.routes.set(apiUrl ? `${method} ${apiUrl} ${path}` : `${method} ${path}`, route);
    return this;
  }

  async request(apiUrl: string, method: HttpMethod, path: string, body?: unknown, opts?: RestRequestOptions): Promise<RestResponse> {
    const call: RestCall = { apiUrl, method, path, body, ...(opts ? { opts } : {}) };
    this.calls.push(call);
    const route = this.routes.get(`${method} ${apiUrl} ${path}`) ?? this.routes.get(`${method} ${path}`);
    if (route === undefined) throw new Error(`FakeRest: no route for ${method} ${apiUrl} ${path}`);
    const answer = typeof route === 'function' ? route(call) : route;
    if (answer === 'unreachable') throw new RestUnreachableError(`${method} ${apiUrl}/${path}`, 'connect ECONNREFUSED');
    return answer;
  }

  /** Calls as `METHOD host/path` strings, for compact assertions. */
  summary(): string[] {
    return this.calls.map((c) => `${c.method} ${c.apiUrl.replace('http://127.0.0.1:', ':')}/${c.path}`);
  }
}

/** Member key fields of a test member. */
export type MemberSpec = Partial<Omit<Member, 'name' | 'revision'>> & { readonly name: string };

/** API url of test member nodeN: http://127.0.0.1:800(7+N). */
export const apiOf = (n: number) => `http://127.0.0.1:${8007 + n}`;

/** A member of a healthy 3-node cluster: node1 leader, others streaming replicas. */
export function member(n: number, extra: Partial<MemberSpec> = {}): MemberSpec {
  const leader = n === 1;
  return {
    name: `node${n}`,
    connUrl: `postgres://127.0.0.1:${15431 + n}/postgres`,
    apiUrl: apiOf(n),
    state: 'running',
    role: leader ? 'primary' : 'replica',
    version: '0.1.0',
    xlogLocation: leader ? 0x4000060 : null,
    receiveLsn: leader ? null : 0x4000060,
    replayLsn: leader ? null : 0x4000000,
    replicationState: leader ? null : 'streaming',
    timeline: 1,
    tags: {},
    pendingRestart: false,
    pendingRestartReason: null,
    scheduledRestart: null,
    ...extra,
  };
}

/** What to seed in the DCS. */
export interface ClusterSpec {
  readonly initialize?: string | null;
  readonly config?: Record<string, unknown> | null;
  readonly leader?: string | null;
  readonly members?: readonly MemberSpec[];
  readonly sync?: { leader: string; syncStandby: string[]; quorum?: number } | null;
  readonly optime?: number | null;
  readonly failover?: { leader: string | null; member: string | null; scheduledAt: string | null } | null;
  readonly history?: readonly HistoryLine[] | null;
}

/** Writes a cluster into the DCS: by default a healthy 3-node cluster led by node1. */
export async function seedCluster(dcs: InMemoryKeyValue, spec: ClusterSpec = {}): Promise<void> {
  const s = {
    initialize: '7300000000000000001',
    config: { ttl: 30, loop_wait: 10 },
    leader: 'node1',
    members: [member(1), member(2), member(3)],
    optime: 0x4000060,
    ...spec,
  };
  if (s.initialize) await dcs.put(ClusterKey.initialize, s.initialize);
  if (s.config) await dcs.put(ClusterKey.config, JSON.stringify(s.config));
  if (s.leader) await dcs.put(ClusterKey.leader, s.leader);
  for (const m of s.members) {
    const { name, ...rest } = member(0, m);
    await dcs.put(ClusterKey.member(name), memberToJson(rest as Omit<Member, 'name' | 'revision'>));
  }
  if (s.sync) await dcs.put(ClusterKey.sync, syncToJson({ leader: s.sync.leader, syncStandby: s.sync.syncStandby, quorum: s.sync.quorum ?? 0 }));
  if (s.optime !== null && s.optime !== undefined) await dcs.put(ClusterKey.status, statusToJson({ optime: s.optime, slots: {} }));
  if (s.failover) await dcs.put(ClusterKey.failover, failoverToJson(s.failover));
  if (s.history) await dcs.put(ClusterKey.history, historyToJson(s.history));
}

/** A CtlContext over an in-memory DCS and a FakeRest, with a scripted user. */
export interface TestCtx extends CtlContext {
  readonly store: InMemoryClusterStore;
  /** The key-value space underneath (the whole store's reachability). */
  readonly space: InMemoryKeyValueSpace;
  /** A raw key-value client on the cluster's prefix, to seed and inspect stored values. */
  readonly kv: InMemoryKeyValue;
  readonly rest: FakeRest;
  readonly clock: FakeClock;
  /** Everything written with out(), one entry per call. */
  readonly outs: string[];
  readonly warns: string[];
  /** Questions asked (confirm and ask). */
  readonly questions: string[];
  /** Answers given in order; confirm takes booleans, ask takes strings. When empty: no / ''. */
  readonly answers: (boolean | string)[];
  /** Number of sleeps so far; the controller aborts after `abortAfterSleeps`. */
  sleeps: number;
  abortAfterSleeps: number;
  /** What the fake editor returns (a function of the text it was given). */
  editor: (text: string) => string;
  readonly files: Map<string, string>;
  readonly sqlCalls: { target: SqlTarget; sql: string }[];
  sqlResult: SqlResult | Error;
  /** All stdout text joined with newlines. */
  text(): string;
  /** Set to act as a terminal: watch loops redraw through it. */
  redraw?: (s: string) => void;
}

/** Builds a TestCtx for cluster `demo` (seed it with seedCluster). */
export function makeCtx(): TestCtx {
  const clock = new FakeClock(Date.UTC(2024, 0, 1, 12, 0, 0));
  const space = new InMemoryKeyValueSpace(clock);
  const kv = new InMemoryKeyValue(space, { clientId: 'seed', prefix: '/service/demo/' });
  const controller = new AbortController();
  const warns: string[] = [];
  const store = new InMemoryClusterStore(space, { clientId: 'wardenctl', prefix: '/service/demo/', logger: new WarningLogger((s) => warns.push(s)) });
  const ctx: TestCtx = {
    scope: 'demo',
    store,
    space,
    kv,
    rest: new FakeRest(),
    clock,
    outs: [],
    warns,
    questions: [],
    answers: [],
    sleeps: 0,
    abortAfterSleeps: Infinity,
    editor: (t) => t,
    files: new Map(),
    sqlCalls: [],
    sqlResult: { columns: [], rows: [] },
    out(s) {
      ctx.outs.push(s);
    },
    warn(s) {
      ctx.warns.push(s);
    },
    async confirm(q) {
      ctx.questions.push(q);
      const a = ctx.answers.shift();
      return a === true || a === 'y';
    },
    async ask(q) {
      ctx.questions.push(q);
      const a = ctx.answers.shift();
      return typeof a === 'string' ? a : '';
    },
    async askHidden(q) {
      return ctx.ask(q);
    },
    now: () => clock.now(),
    async sleep(ms) {
      clock.set(clock.now() + ms);
      ctx.sleeps++;
      if (ctx.sleeps >= ctx.abortAfterSleeps) controller.abort();
    },
    signal: controller.signal,
    async edit(text) {
      return ctx.editor(text);
    },
    async readFile(path) {
      const t = ctx.files.get(path);
      if (t === undefined) throw new Error(`no test file ${path}`);
      return t;
    },
    async runSql(target, sql) {
      ctx.sqlCalls.push({ target, sql });
      if (ctx.sqlResult instanceof Error) throw ctx.sqlResult;
      return ctx.sqlResult;
    },
    text: () => ctx.outs.join('\n'),
  };
  return ctx;
}

/** A JSON answer. */
export const json = (status: number, body: unknown): RestResponse => ({ status, body });
