import { FakeClock } from '../../adapters/clock/fake-clock.js';
import type { ClusterEvent } from '../../ports/events.js';
import { parseCluster } from '../../adapters/cluster-store/codec.js';
import { InMemoryClusterStore } from '../../adapters/cluster-store/in-memory-cluster-store.js';
import { InMemoryKeyValueSpace } from '../../adapters/cluster-store/in-memory-key-value.js';
import { FakeDatabase, FakeDatabaseNetwork } from '../../adapters/database/fake-database.js';
import { MemoryLogger } from '../../adapters/logger/memory-logger.js';
import { FakeWatchdog } from '../../adapters/watchdog/fake-watchdog.js';
import type { RawConfig } from '../../domain/cluster/config/config.js';
import type { Cluster } from '../../domain/cluster/model/cluster.js';
import type { TagValue, WatchdogMode } from '../../domain/cluster/model/node.js';
import type { NodeStatus } from '../../domain/cluster/model/status.js';
import type { PeerApi } from '../../ports/peer-api.js';
import type { HookScripts } from '../../ports/hook-scripts.js';
import { HaLoop } from '../agent/ha-loop.js';
import { fixedSettings, type HaLoopOptions } from '../agent/tokens.js';
import type { LocalOptions } from '../../domain/cluster/ha/decision.js';

/** Options of one node of a TestCluster. */
export interface TestNodeOptions {
  /** The node's tags (`nofailover`, `noloadbalance`, user tags). */
  readonly tags?: Readonly<Record<string, TagValue>>;
  /** Watchdog mode (default `off`). */
  readonly watchdogMode?: WatchdogMode;
  /** The node's own file settings: `db.parameters`, `db.recovery_conf`, `watchdog.safety_margin` (default none, none, 5). */
  readonly local?: Partial<Omit<LocalOptions, 'bootstrapDcs'>>;
  /** HA loop tunables (default peer and failsafe calls bounded at 500 ms, no refresh between ticks). */
  readonly loop?: HaLoopOptions;
  /** The node's blocking scripts (see FakeHookScripts); given, the node runs `pre_promote` before every promotion. Default none. */
  readonly hooks?: HookScripts;
}

/** Options of a TestCluster. */
export interface TestClusterOptions {
  /** Member names, e.g. `['node1', 'node2', 'node3']`. */
  readonly names: readonly string[];
  /** The dynamic configuration the first node writes (default ttl 30, loop_wait 10, retry_timeout 10). */
  readonly config?: RawConfig;
  /** Per-node options. */
  readonly nodes?: Readonly<Record<string, TestNodeOptions>>;
  /** Fake time between two steps of `advance` (lease expiry, replication), default 250 ms. */
  readonly stepMs?: number;
}

/** One node of a TestCluster: its agent's HA loop, its fake database and its log. */
export interface TestNode {
  readonly name: string;
  /** The agent (null while stopped or after `crash`). */
  readonly loop: HaLoop | null;
  readonly db: FakeDatabase;
  readonly watchdog: FakeWatchdog;
  /** Every line the node's agent logged. */
  readonly logger: MemoryLogger;
  /** Where its agent's REST API answers (what `TestCluster.peers` takes). */
  readonly apiUrl: string;
  /** Cut off the DCS (see `TestCluster.cut`). */
  readonly dcsCut: boolean;
  /** Cut off the other agents' REST APIs, both ways (see `TestCluster.cut`). */
  readonly peersCut: boolean;
  /** Its database cut off from the other databases, both ways (see `TestCluster.cut`). */
  readonly databasesCut: boolean;
}

/** What `TestCluster.cut` separates a node from. */
export interface TestCut {
  /** Its agent cannot reach the DCS (its lease runs out; failsafe mode decides what it may do). */
  readonly dcs?: boolean;
  /** Its agent and the others cannot reach each other's REST API (peer checks, failsafe calls). */
  readonly peers?: boolean;
  /** Its database and the others cannot reach each other: no streamed WAL, base backup or rewind (clients and its agent still reach it). */
  readonly databases?: boolean;
}

class Node implements TestNode {
  loop: HaLoop | null = null;
  store: InMemoryClusterStore | null = null;
  readonly db: FakeDatabase;
  readonly watchdog: FakeWatchdog;
  readonly logger = new MemoryLogger();
  dcsCut = false;
  peersCut = false;
  get databasesCut(): boolean {
    return this.db.network.isCutOff(this.db.connUrl);
  }
  private generation = 0;

  constructor(
    readonly name: string,
    private readonly cluster: TestCluster,
    private readonly options: TestNodeOptions,
  ) {
    this.db = new FakeDatabase({ name, connUrl: TestCluster.connUrl(name), network: cluster.network, clock: cluster.clock });
    this.watchdog = new FakeWatchdog({ clock: cluster.clock });
  }

  get apiUrl(): string {
    return `http://${this.name}:8008`;
  }

  start(): void {
    if (this.loop) return;
    this.store = new InMemoryClusterStore(this.cluster.space, { clientId: `${this.name}#${++this.generation}`, logger: this.logger });
    if (this.dcsCut) this.store.setReachable(false);
    this.loop = new HaLoop(
      this.store,
      this.db,
      this.cluster.clock,
      this.watchdog,
      this.logger.child({ node: this.name }),
      new LoopPeers(this.cluster, this.name),
      fixedSettings({
        node: {
          scope: 'test',
          name: this.name,
          apiUrl: this.apiUrl,
          connUrl: TestCluster.connUrl(this.name),
          tags: this.options.tags ?? {},
          watchdogMode: this.options.watchdogMode ?? 'off',
          svcVersion: '0.0.0',
        },
        local: { parameters: {}, watchdogSafetyMargin: 5, ...(this.options.hooks ? { prePromote: true, postBootstrap: true } : {}), ...this.options.local, bootstrapDcs: this.cluster.config },
      }),
      // Refreshes between ticks would let the fake replicas move on probes nobody planned.
      { peerTimeoutMs: 500, failsafeTimeoutMs: 500, snapshotRefreshMs: 0, ...this.options.loop },
      undefined,
      undefined,
      undefined,
      undefined,
      this.options.hooks,
    );
    this.loop.start();
  }

  /** The agent dies at once, with no clean-up: its DCS client is cut, its lease runs out. */
  kill(): void {
    const loop = this.loop;
    if (!loop || !this.store) return;
    this.loop = null;
    this.store.setReachable(false);
    void this.store.close();
    void loop.stop({ releaseLeader: false, stopDatabase: false }).catch(() => undefined);
  }
}

/**
 * Routes the agents' peer calls to each other's published status, without sockets. A cut node
 * answers nobody and reaches nobody: the call is dropped and the caller gives up after its
 * timeout, on the cluster's clock, as over a network that drops packets. An agent that does not
 * run answers nothing at once, as a refused connection does.
 */
class LoopPeers implements PeerApi {
  constructor(
    private readonly cluster: TestCluster,
    private readonly from: string | null = null,
  ) {}

  /** The node at `apiUrl` as this caller reaches it: 'cut' when a cut lies between them; undefined when no such node. */
  private reach(apiUrl: string): TestNode | 'cut' | undefined {
    const to = this.cluster.byApiUrl(apiUrl);
    const caller = this.from === null ? undefined : this.cluster.node(this.from);
    if (to === undefined) return undefined;
    return to.peersCut || caller?.peersCut === true ? 'cut' : to;
  }

  async fetchStatus(apiUrl: string, timeoutMs: number, opts?: { readonly fresh?: boolean }): Promise<NodeStatus | null> {
    const to = this.reach(apiUrl);
    if (to === 'cut') return this.cluster.clock.sleep(timeoutMs).then(() => null);
    const loop = to?.loop;
    if (!loop) return null;
    return opts?.fresh ? loop.freshStatus() : loop.snapshot().status;
  }

  async postFailsafe(apiUrl: string, body: { readonly name: string; readonly members: Readonly<Record<string, string>> }, timeoutMs: number): Promise<boolean> {
    const to = this.reach(apiUrl);
    if (to === 'cut') return this.cluster.clock.sleep(timeoutMs).then(() => false);
    return to?.loop?.acceptFailsafe(body) ?? false;
  }

  async fetchEvents(): Promise<readonly ClusterEvent[]> {
    return [];
  }
}

/**
 * A cluster of agents in one process, for testing failover policies and tools without
 * PostgreSQL, etcd or sockets: every node runs the real HA loop over an in-memory cluster
 * store, a fake database and a fake watchdog, all on one fake clock. Time moves only in
 * `advance` and `until`, so a test of a failover that takes a minute of cluster time runs
 * in milliseconds.
 *
 * ```ts
 * const cluster = new TestCluster({ names: ['node1', 'node2', 'node3'] });
 * cluster.start();
 * await cluster.until(() => cluster.primary() !== null && cluster.streaming().length === 2, 120_000);
 * cluster.crash(cluster.primary()!);
 * await cluster.until(() => cluster.primary() !== null, 120_000);
 * ```
 */
export class TestCluster {
  /** The fake clock every node runs on. */
  readonly clock = new FakeClock();
  /** The in-memory DCS the nodes share. */
  readonly space: InMemoryKeyValueSpace;
  /** The fake network the databases replicate over. */
  readonly network = new FakeDatabaseNetwork();
  readonly peers: PeerApi = new LoopPeers(this);
  readonly config: RawConfig;
  private readonly stepMs: number;
  private readonly nodeMap = new Map<string, Node>();

  constructor(opts: TestClusterOptions) {
    this.space = new InMemoryKeyValueSpace(this.clock);
    this.config = opts.config ?? { ttl: 30, loop_wait: 10, retry_timeout: 10 };
    this.stepMs = opts.stepMs ?? 250;
    for (const name of opts.names) this.nodeMap.set(name, new Node(name, this, opts.nodes?.[name] ?? {}));
  }

  /** conn_url of a node's database. */
  static connUrl(name: string): string {
    return `postgres://${name}:5432/postgres`;
  }

  /** The nodes, in the order given. */
  get nodes(): readonly TestNode[] {
    return [...this.nodeMap.values()];
  }

  /** A node by name (throws for an unknown one). */
  node(name: string): TestNode {
    const n = this.nodeMap.get(name);
    if (!n) throw new Error(`no node ${name} in the test cluster`);
    return n;
  }

  /** The node whose agent answers at `apiUrl`. */
  byApiUrl(apiUrl: string): TestNode | undefined {
    return [...this.nodeMap.values()].find((n) => n.apiUrl === apiUrl);
  }

  /** Starts the agent of every node, or of the ones named. */
  start(names?: readonly string[]): void {
    for (const name of names ?? [...this.nodeMap.keys()]) (this.node(name) as Node).start();
  }

  /** Stops an agent cleanly: its database is stopped, the leader key released, its member record goes. */
  async stop(name: string): Promise<void> {
    const n = this.node(name) as Node;
    const loop = n.loop;
    if (!loop) return;
    n.loop = null;
    await loop.stop();
    await n.store?.close();
  }

  /**
   * Cuts a node off the DCS, the other agents and/or the other databases (a network
   * partition of its agent, of its server, or of its whole host with `peers` and `databases`
   * together). What is not named stays as it was; `heal` undoes every cut. A restarted agent
   * stays cut.
   */
  cut(name: string, what: TestCut): void {
    const n = this.node(name) as Node;
    if (what.dcs !== undefined) {
      n.dcsCut = what.dcs;
      n.store?.setReachable(!what.dcs);
    }
    if (what.peers !== undefined) n.peersCut = what.peers;
    if (what.databases !== undefined) this.network.setCutOff(n.db.connUrl, what.databases);
  }

  /** Undoes every cut of a node. */
  heal(name: string): void {
    this.cut(name, { dcs: false, peers: false, databases: false });
  }

  /** The node's machine dies: the agent stops at once without clean-up and the database crashes. */
  crash(name: string): void {
    const n = this.node(name) as Node;
    n.kill();
    n.db.crash();
  }

  /** Moves fake time by `ms` in steps, expiring leases and letting replicas stream after each. */
  async advance(ms: number): Promise<void> {
    for (let left = ms; left > 0; left -= this.stepMs) {
      await this.clock.advance(Math.min(this.stepMs, left));
      this.space.expireLeases();
      this.network.replicate();
      const writable = this.nodes.filter((n) => n.db.isWritable);
      if (writable.length > 1) throw new Error(`split brain: ${writable.map((n) => n.name).join(', ')} accept writes`);
    }
  }

  /** Advances until `pred` holds; throws after `timeoutMs` of fake time. Resolves with the fake time it took. */
  async until(pred: () => boolean, timeoutMs: number, what = 'the condition'): Promise<number> {
    const start = this.clock.now();
    while (!pred()) {
      if (this.clock.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms of fake time waiting for ${what}`);
      await this.advance(this.stepMs);
    }
    return this.clock.now() - start;
  }

  /** The node that holds the leader lock and accepts writes, or null. */
  primary(): string | null {
    const p = this.nodes.filter((n) => n.loop !== null && n.db.isWritable && (n.loop.lockHeldUntil() ?? 0) > this.clock.now());
    return p.length === 1 ? p[0]!.name : null;
  }

  /** Names of the nodes whose database streams from an upstream. */
  streaming(): string[] {
    return this.nodes.filter((n) => n.db.isStreaming).map((n) => n.name);
  }

  /** The name in the DCS leader key, or null. */
  leaderKey(): string | null {
    this.space.expireLeases();
    return this.space.peek('leader')?.value || null;
  }

  /** The cluster as the DCS holds it now. */
  view(): Cluster {
    return parseCluster(this.space.range('')).cluster;
  }

  /** Stops every agent without clean-up (end of a test). */
  shutdown(): void {
    for (const n of this.nodeMap.values()) n.kill();
  }
}
