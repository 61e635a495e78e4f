import type { ClusterEvent } from '../../../../src/ports/events.js';
import { nodeSettings as baseNodeSettings, primaryFacts } from '../../domain/cluster/fixtures.js';
import { EMPTY_CLUSTER, type Cluster, type HistoryLine, type ScheduledRestart } from '../../../../src/domain/cluster/model/cluster.js';
import { resolveConfig, type RawConfig } from '../../../../src/domain/cluster/config/config.js';
import type { LocalFacts } from '../../../../src/domain/cluster/model/facts.js';
import type { NodeSettings } from '../../../../src/domain/cluster/model/node.js';
import type { NodeSnapshot } from '../../../../src/domain/cluster/model/snapshot.js';
import { buildStatus, type NodeStatus } from '../../../../src/domain/cluster/model/status.js';
import { InMemoryKeyValue, InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import { InMemoryClusterStore } from '../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { createAgentApi, type AgentApiDeps } from '../../../../src/adapters/http/agent-api.js';
import type { AccessSettings } from '../../../../src/adapters/http/auth.js';
import { createAgentServer, type AgentServer, type TlsSettings } from '../../../../src/adapters/http/server.js';
import { AgentMetrics } from '../../../../src/adapters/metrics/agent-metrics.js';
import { InMemoryEventLog } from '../../../../src/adapters/events/in-memory-event-log.js';
import type { ActionResult, AgentControl, FailsafePing } from '../../../../src/ports/agent-control.js';
import type { RestartConditions } from '../../../../src/domain/cluster/ha/decision.js';
import type { Problem } from '../../../../src/domain/errors.js';
import type { Clock } from '../../../../src/ports/clock.js';
import type { Logger, LogFields } from '../../../../src/ports/logger.js';
import type { PeerApi } from '../../../../src/ports/peer-api.js';

/** Fixed "now" of the API tests: 2030-01-01T00:00:00Z. */
export const NOW = Date.UTC(2030, 0, 1);

/**
 * A clock for API tests: `now()` is virtual and only moves when set or when someone sleeps;
 * `sleep(ms)` moves virtual time by `ms` and yields a real millisecond, so a 20 s
 * switchover wait runs in a few real milliseconds and deterministically.
 */
export class SteppingClock implements Clock {
  constructor(public t = NOW) {}
  now(): number {
    return this.t;
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return;
    this.t += Math.max(0, ms);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** Log lines kept in memory. */
export class ListLogger implements Logger {
  readonly lines: { level: string; msg: string; fields?: LogFields }[] = [];
  debug(msg: string, fields?: LogFields) {
    this.lines.push({ level: 'debug', msg, fields });
  }
  info(msg: string, fields?: LogFields) {
    this.lines.push({ level: 'info', msg, fields });
  }
  warn(msg: string, fields?: LogFields) {
    this.lines.push({ level: 'warn', msg, fields });
  }
  error(msg: string, fields?: LogFields) {
    this.lines.push({ level: 'error', msg, fields });
  }
  child(): Logger {
    return this;
  }
}

export { primaryFacts };

/** The domain fixtures' node, at an svc version whose metric encoding is easy to check (010200). */
export function nodeSettings(over: Partial<NodeSettings> = {}): NodeSettings {
  return baseNodeSettings({ svcVersion: '1.2.0', ...over });
}

export function replicaFacts(over: Partial<LocalFacts> = {}): LocalFacts {
  return primaryFacts({
    inRecovery: true,
    walLocation: null,
    receivedLocation: 99_500_000,
    replayedLocation: 99_000_000,
    replayedTimestamp: '2029-12-31T23:59:59.000+00:00',
    replicationState: 'streaming',
    upstreamConnUrl: 'postgres://127.0.0.1:5433/postgres',
    ...over,
  });
}

/** A cluster view: leader (null for none), status optime, sync members. */
export function clusterView(opts: { leader?: string | null; optime?: number; sync?: string[] | null; config?: RawConfig } = {}): Cluster {
  const leader = opts.leader === undefined ? 'node0' : opts.leader;
  return {
    ...EMPTY_CLUSTER,
    initialize: '7300000000000000001',
    config: opts.config ? { value: opts.config, revision: '3' } : null,
    leader: leader === null ? null : { name: leader, revision: '5' },
    status: { optime: opts.optime ?? 100_000_000, slots: {}, revision: '6' },
    sync: opts.sync ? { leader, syncStandby: opts.sync, quorum: 0, revision: '7' } : null,
  };
}

/** Options of a snapshot. */
export interface SnapshotOptions {
  facts?: LocalFacts;
  node?: Partial<NodeSettings>;
  config?: RawConfig;
  cluster?: Cluster | null;
  /** This node holds the leader lock (until NOW + 20 s). */
  leader?: boolean;
  standbyCluster?: boolean;
  clusterReadAt?: number | null;
  lastLoopAt?: number;
  failsafeActive?: boolean;
}

/** A published snapshot, its status document built the way the HA loop builds it. */
export function snapshot(opts: SnapshotOptions = {}): NodeSnapshot {
  const facts = opts.facts ?? replicaFacts();
  const node = nodeSettings(opts.node);
  const config = resolveConfig(opts.config ?? {});
  const isLeader = opts.leader ?? false;
  const cluster = opts.cluster === undefined ? clusterView({ leader: isLeader ? node.name : 'node0' }) : opts.cluster;
  const standbyCluster = opts.standbyCluster ?? false;
  const status = buildStatus({
    facts,
    node,
    config,
    cluster,
    isLeader,
    standbyCluster,
    dcsLastSeen: NOW / 1000,
    failsafeActive: opts.failsafeActive ?? false,
    watchdogFailed: false,
    scheduledRestart: null,
  });
  return {
    status,
    facts,
    node,
    config,
    cluster,
    clusterReadAt: opts.clusterReadAt === undefined ? NOW - 1000 : opts.clusterReadAt,
    leaderLockExpiresAt: isLeader ? NOW + 20_000 : null,
    lastLoopAt: opts.lastLoopAt ?? NOW - 1000,
    standbyCluster,
  };
}

/** An AgentControl whose answers the test sets, recording every call. */
export class FakeControl implements AgentControl {
  snap: NodeSnapshot;
  wakes = 0;
  refreshes = 0;
  onWake: () => void | Promise<void> = () => {};
  restartResult: ActionResult = { ok: true, message: 'restarted successfully' };
  restarts: RestartConditions[] = [];
  scheduled: ScheduledRestart | null = null;
  reinitResult: ActionResult = { ok: true, message: 'reinitialize started' };
  reinits: { force: boolean; fromLeader: boolean }[] = [];
  reloads = 0;
  historyLines: HistoryLine[] = [];
  failsafeAccept = true;
  failsafePings: FailsafePing[] = [];

  constructor(snap: NodeSnapshot = snapshot()) {
    this.snap = snap;
  }
  /** What freshStatus answers (the snapshot's status when null); counts the calls. */
  fresh: NodeStatus | null = null;
  freshCalls = 0;
  snapshot(): NodeSnapshot {
    return this.snap;
  }
  /** freshStatus answers null (a failed probe). */
  freshFails = false;
  async freshStatus(): Promise<NodeStatus | null> {
    this.freshCalls++;
    if (this.freshFails) return null;
    return this.fresh ?? this.snap.status;
  }
  wake(): void {
    this.wakes++;
    void this.onWake();
  }
  async refreshView(): Promise<void> {
    this.refreshes++;
  }
  async restartNow(conditions: RestartConditions): Promise<ActionResult> {
    this.restarts.push(conditions);
    return this.restartResult;
  }
  scheduledRestart(): ScheduledRestart | null {
    return this.scheduled;
  }
  setScheduledRestart(restart: ScheduledRestart | null): void {
    this.scheduled = restart;
  }
  async reinitialize(req: { readonly force: boolean; readonly fromLeader: boolean }): Promise<ActionResult> {
    this.reinits.push({ ...req });
    return this.reinitResult;
  }
  requestReload(): void {
    this.reloads++;
  }
  /** What checkLocalConfig answers (set by a test). */
  localConfigProblems: Problem[] = [];
  async checkLocalConfig(): Promise<readonly Problem[]> {
    return this.localConfigProblems;
  }
  async localHistory(): Promise<readonly HistoryLine[]> {
    return this.historyLines;
  }
  acceptFailsafe(ping: FailsafePing): boolean {
    this.failsafePings.push(ping);
    return this.failsafeAccept;
  }
}

/** Peers answering from a table: api_url -> status (absent: unreachable). */
export class TablePeers implements PeerApi {
  readonly statuses = new Map<string, NodeStatus>();
  readonly asked: string[] = [];
  async fetchStatus(apiUrl: string): Promise<NodeStatus | null> {
    this.asked.push(apiUrl);
    return this.statuses.get(apiUrl) ?? null;
  }
  async postFailsafe(): Promise<boolean> {
    return true;
  }
  async fetchEvents(): Promise<readonly ClusterEvent[]> {
    return [];
  }
}

/** A member key's JSON for the in-memory DCS. */
export function memberJson(name: string, over: Record<string, unknown> = {}): string {
  const port = 5432 + Number(name.replace(/\D/g, '') || 0);
  return JSON.stringify({
    conn_url: `postgres://127.0.0.1:${port}/postgres`,
    api_url: `http://127.0.0.1:${8008 + Number(name.replace(/\D/g, '') || 0)}`,
    state: 'running',
    role: 'replica',
    version: '1.2.0',
    timeline: 2,
    ...over,
  });
}

/** Everything one API test needs: the app served on a free port, its fakes, and a request helper. */
export interface ApiHarness {
  readonly url: string;
  readonly control: FakeControl;
  /** The raw key-value client the API's store uses (seed values, inject faults). */
  readonly dcs: InMemoryKeyValue;
  /** The key-value space (the whole store's reachability). */
  readonly store: InMemoryKeyValueSpace;
  /** The API's cluster store. */
  readonly clusterStore: InMemoryClusterStore;
  readonly clock: Clock;
  readonly peers: TablePeers;
  readonly logger: ListLogger;
  readonly metrics: AgentMetrics;
  /** The API's event stream. */
  readonly events: InMemoryEventLog;
  readonly server: AgentServer;
  request(method: string, path: string, opts?: { body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<TestResponse>;
  close(): Promise<void>;
}

/** A response read whole. */
export interface TestResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** Parsed JSON body (undefined when the body is empty or not JSON). */
  readonly json: any;
}

/** Starts the API over fakes. */
export async function startApi(
  opts: {
    snapshot?: NodeSnapshot;
    /** A control of the test's own (a FakeControl subclass); default a FakeControl over `snapshot`. */
    control?: FakeControl;
    access?: AccessSettings;
    /** `http_extra_headers`; a function is asked per request, as the agent does after reloads. */
    extraHeaders?: Record<string, string> | (() => Record<string, string>);
    tls?: TlsSettings;
    prefill?: Record<string, string>;
    /** Default a SteppingClock (virtual time). */
    clock?: Clock;
    /** How often a waiting switchover re-reads the DCS besides its watch (default 500 ms). */
    pollIntervalMs?: number;
  } = {},
): Promise<ApiHarness> {
  const clock = opts.clock ?? new SteppingClock();
  const store = new InMemoryKeyValueSpace(clock);
  const clusterStore = new InMemoryClusterStore(store, { clientId: 'node1' });
  // The store's own client: tests seed through it and may wrap its calls to inject faults.
  const dcs = clusterStore.client;
  for (const [k, v] of Object.entries(opts.prefill ?? {})) await dcs.put(k, v);
  const control = opts.control ?? new FakeControl(opts.snapshot ?? snapshot());
  const peers = new TablePeers();
  const logger = new ListLogger();
  const deps: AgentApiDeps = {
    control,
    store: clusterStore,
    clock,
    peers,
    metrics: new AgentMetrics({ scope: control.snap.node.scope, name: control.snap.node.name }),
    logger,
    access: opts.access ?? {},
    extraHeaders: opts.extraHeaders,
    options: { pollIntervalMs: opts.pollIntervalMs ?? 500, peerTimeoutMs: 100 },
    events: new InMemoryEventLog({ member: control.snap.node.name, clock, logger: null, capacity: 50 }),
  };
  const app = createAgentApi(deps);
  const server = createAgentServer(app.callback(), { listen: '127.0.0.1:0', tls: opts.tls });
  await server.listen();
  const url = server.url();
  return {
    url,
    control,
    dcs,
    store,
    clusterStore,
    clock,
    peers,
    logger,
    metrics: deps.metrics,
    events: deps.events as InMemoryEventLog,
    server,
    async request(method, path, ro = {}) {
      const headers: Record<string, string> = { ...(ro.headers ?? {}) };
      let body: string | undefined = ro.raw;
      if (ro.body !== undefined) {
        body = JSON.stringify(ro.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(url + path, { method, headers, body });
      const text = await res.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      return { status: res.status, headers: res.headers, text, json };
    },
    close: () => server.close(100),
  };
}
