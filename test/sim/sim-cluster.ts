import type { FakeHookScripts } from '../../src/adapters/callbacks/fake-hook-scripts.js';
import type { ClusterEvent } from '../../src/ports/events.js';
import { FakeClock } from '../../src/adapters/clock/fake-clock.js';
import { FakeDatabase, FakeDatabaseNetwork } from '../../src/adapters/database/fake-database.js';
import { InMemoryKeyValue, InMemoryKeyValueSpace } from '../../src/adapters/cluster-store/in-memory-key-value.js';
import { InMemoryClusterStore } from '../../src/adapters/cluster-store/in-memory-cluster-store.js';
import type { Clock } from '../../src/ports/clock.js';
import { SimFencer } from './sim-fencer.js';
import { undoUnfinishedPromotion } from '../../src/app/fencer/promotion-undo.js';
import type { StoppedServer } from '../../src/domain/cluster/ha/promotion-undo.js';

/** The fencer's safety margin: `watchdog.safety_margin` of the simulated nodes (5 s). */
const SAFETY_MARGIN_MS = 5000;
import { MemoryLogger } from '../../src/adapters/logger/memory-logger.js';
import { FakeWatchdog } from '../../src/adapters/watchdog/fake-watchdog.js';
import { HaLoop } from '../../src/app/agent/ha-loop.js';
import { fixedSettings } from '../../src/app/agent/tokens.js';
import type { Cluster } from '../../src/domain/cluster/model/cluster.js';
import { parseCluster } from '../../src/adapters/cluster-store/codec.js';
import type { RawConfig } from '../../src/domain/cluster/config/config.js';
import type { TagValue, WatchdogMode } from '../../src/domain/cluster/model/node.js';
import type { NodeStatus } from '../../src/domain/cluster/model/status.js';
import type { Database } from '../../src/ports/database.js';
import type { Logger } from '../../src/ports/logger.js';
import type { PeerApi } from '../../src/ports/peer-api.js';
import type { Watchdog } from '../../src/ports/watchdog.js';

/** Ms a watch report takes to reach a node whose progress answers are not trusted: its answers overtake them. */
const DISTRUSTED_EVENT_DELAY_MS = 20;

/** Per-node options of a simulated cluster. */
export interface SimNodeOptions {
  readonly tags?: Readonly<Record<string, TagValue>>;
  readonly watchdogMode?: WatchdogMode;
  readonly watchdogUsable?: boolean;
  /** The node's blocking scripts; given, the node runs `pre_promote` before every promotion. */
  readonly hooks?: FakeHookScripts;
  /** The node has a `post_bootstrap` script (run through `hooks`): a bootstrap runs it before it registers the cluster. */
  readonly postBootstrap?: boolean;
  /** The node's etcd client does not trust its watch progress answers (an old etcd release, whose answers overtake watch reports still on their way). */
  readonly progressDistrusted?: boolean;
}

/** Options of a simulated cluster. */
export interface SimClusterOptions {
  readonly names: readonly string[];
  /** bootstrap.dcs (the dynamic config the first node writes). */
  readonly config?: RawConfig;
  readonly nodes?: Readonly<Record<string, SimNodeOptions>>;
  /** Keep every log line (default false: only warnings and errors are kept). */
  readonly verboseLogs?: boolean;
  /** Fake time between two housekeeping steps (lease expiry, replication), default 250 ms. */
  readonly stepMs?: number;
  /** How long a DCS call takes to fail while the DCS is unreachable (default 0: at once). */
  readonly dcsFailDelayMs?: number;
}

/** A port whose every call fails once its process is dead (a killed agent must not act any more). */
function killable<T extends object>(target: T, isDead: () => boolean, fail: () => Error): T {
  return new Proxy(target, {
    get(obj, prop) {
      // The target's own code runs on the target itself, not through the proxy.
      const value = Reflect.get(obj, prop, obj) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (isDead()) return Promise.reject(fail());
        return (value as (...a: unknown[]) => unknown).apply(obj, args);
      };
    },
  });
}

/**
 * A port whose every call waits while its process is frozen (SIGSTOP): calls made then, and
 * the answers of calls in flight, resume only once it thaws.
 */
function freezable<T extends object>(target: T, gate: () => Promise<void>): T {
  return new Proxy(target, {
    get(obj, prop) {
      const value = Reflect.get(obj, prop, obj) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const out = (value as (...a: unknown[]) => unknown).apply(obj, args);
        if (!(out instanceof Promise)) return out;
        // A call that fails while the process is frozen fails for the caller after the thaw, not as an unhandled rejection now.
        out.catch(() => undefined);
        return gate().then(() => out).then(async (v) => {
          await gate();
          return v;
        });
      };
    },
  });
}

/** A logger that keeps only warnings and errors (the simulation runs thousands of ticks). */
class QuietLogger extends MemoryLogger {
  override debug(): void {}
  override info(): void {}
  override child(): Logger {
    return this;
  }
}

/** One simulated machine: its database (disk survives agent restarts), and the current agent process. */
export class SimNode {
  readonly db: FakeDatabase;
  readonly logger: MemoryLogger;
  dcs!: InMemoryClusterStore;
  watchdog!: FakeWatchdog;
  loop!: HaLoop;
  /** The agent process is up (a dead one answers no API call and touches nothing). */
  alive = false;
  /** The node's link to the DCS is up. */
  dcsLinkUp = true;
  /** The agent process is frozen (SIGSTOP): it does nothing and answers nobody until it thaws. */
  frozen = false;
  /** The machine's fencer (null while no agent ever ran or after the machine crashed). */
  fencer: SimFencer | null = null;
  private thawed: Promise<void> = Promise.resolve();
  private thaw: () => void = () => {};
  private generation = 0;

  constructor(
    readonly name: string,
    private readonly sim: SimCluster,
    readonly options: SimNodeOptions,
  ) {
    this.db = new FakeDatabase({ name, connUrl: SimCluster.connUrl(name), network: sim.network, clock: sim.clock });
    this.logger = sim.verboseLogs ? new MemoryLogger() : new QuietLogger();
  }

  get apiUrl(): string {
    return `http://${this.name}:8008`;
  }

  /** A clean stop is under way (the agent counts as alive until it is done). */
  stopping = false;
  /** Start a new agent as soon as the clean stop under way is done. */
  private startWhenStopped = false;

  /** Starts a fresh agent process (new DCS client and lease, new watchdog handle); after a clean stop under way, once it is done. */
  startAgent(): void {
    if (this.stopping) {
      this.startWhenStopped = true;
      return;
    }
    if (this.alive) return;
    const gen = ++this.generation;
    const dead = () => this.generation !== gen || !this.alive;
    const gate = () => this.thawed;
    // A process frozen while its clean stop ran on is gone: the new one must not wait on the old one's thaw.
    this.thawAgent();
    this.dcs = new InMemoryClusterStore(this.sim.store, { clientId: `${this.name}#${gen}`, logger: this.logger });
    this.dcs.setReachable(this.dcsLinkUp);
    this.dcs.client.progressDistrusted = this.options.progressDistrusted ?? false;
    // Its watch reports take a moment on the way, which its progress answers (sent at once) overtake.
    this.dcs.client.eventDelayMs = this.options.progressDistrusted ? DISTRUSTED_EVENT_DELAY_MS : 0;
    this.watchdog = new FakeWatchdog({ usable: this.options.watchdogUsable ?? true, clock: this.sim.clock });
    this.fencer ??= new SimFencer(
      this.sim.clock,
      this.db,
      SAFETY_MARGIN_MS,
      (server, release) => this.sim.afterFenceOf(this.name, server, release),
      this.name,
      () => (this.dcsLinkUp && this.sim.store.reachable ? this.sim.leaderKey() : undefined),
      (listener) => new InMemoryKeyValue(this.sim.store, { clientId: `fencer-watch-${this.name}` }).watch((key, value) => {
        if (key === 'leader' && this.dcsLinkUp) listener(value);
      }),
    );
    const db = freezable(killable<Database>(this.db, dead, () => new Error(`${this.name}: agent process is dead`)), gate);
    const watchdog = freezable(killable<Watchdog>(this.watchdog, dead, () => new Error(`${this.name}: agent process is dead`)), gate);
    const clock = this.sim.clock;
    const agentClock: Clock = { now: () => clock.now(), sleep: async (ms, signal) => { await clock.sleep(ms, signal); await gate(); } };
    this.loop = new HaLoop(
      freezable(this.dcs, gate),
      db,
      agentClock,
      watchdog,
      this.logger.child({ node: this.name }),
      new SimPeerApi(this.sim, this),
      fixedSettings({
        node: {
          scope: 'demo',
          name: this.name,
          apiUrl: this.apiUrl,
          connUrl: SimCluster.connUrl(this.name),
          tags: this.options.tags ?? {},
          watchdogMode: this.options.watchdogMode ?? 'off',
          svcVersion: '0.1.0',
        },
        local: { bootstrapDcs: this.sim.config, parameters: {}, watchdogSafetyMargin: 5, ...(this.options.hooks ? { prePromote: true } : {}), ...(this.options.postBootstrap ? { postBootstrap: true } : {}) },
      }),
      // Refreshes between ticks would let the fake replicas catch up on probes the schedules do not plan.
      { peerTimeoutMs: 500, failsafeTimeoutMs: 500, snapshotRefreshMs: 0 },
      undefined,
      this.fencer,
      undefined,
      undefined,
      this.options.hooks,
    );
    this.alive = true;
    this.loop.start();
  }

  /** The agent process dies at once: no cleanup, its DCS client is cut; its fencer stops the database and releases a lock it held. */
  killAgent(): void {
    if (!this.alive) return;
    this.alive = false;
    this.thawAgent();
    this.db.agentDied();
    this.fencer?.agentDied();
    this.dcs.setReachable(false);
    void this.dcs.close();
    void this.loop.stop({ releaseLeader: false, stopDatabase: false }).catch(() => undefined);
  }

  /**
   * The agent stops cleanly (SIGTERM), as the real one does: it stops its server and releases
   * its lock, or in pause leaves the server running (a primary's lock guarded by the fencer).
   * It counts as alive until its shutdown is done.
   */
  stopAgent(): void {
    if (!this.alive || this.frozen || this.stopping) return;
    this.stopping = true;
    const gen = this.generation;
    const loop = this.loop;
    const dcs = this.dcs;
    void loop
      .stop({ releaseLeader: true, stopDatabase: true, leaveRunningInPause: true })
      .catch(() => 'stopped' as const)
      .then(async (outcome) => {
        // Killed, or its machine crashed, in the middle of its shutdown: that path has done the rest.
        if (this.generation !== gen || !this.alive) return;
        if (outcome === 'stopped') await this.fencer?.detach();
        this.alive = false;
        dcs.setReachable(false);
        await dcs.close();
      })
      .finally(() => {
        if (this.generation !== gen) return;
        this.stopping = false;
        const again = this.startWhenStopped;
        this.startWhenStopped = false;
        if (again) this.startAgent();
      });
  }

  /** The whole machine dies: agent, fencer and postmaster. */
  crash(): void {
    this.fencer?.die();
    this.fencer = null;
    this.killAgentQuietly();
    this.db.powerOff();
  }

  /** Freezes the agent (SIGSTOP): its database runs on; its fencer does not freeze. */
  freezeAgent(): void {
    if (!this.alive || this.frozen) return;
    this.frozen = true;
    this.thawed = new Promise<void>((r) => (this.thaw = r));
  }

  /** Thaws a frozen agent (SIGCONT). */
  thawAgent(): void {
    if (!this.frozen) return;
    this.frozen = false;
    this.thaw();
  }

  /** The agent dies with its machine: nobody is left to fence or release anything. */
  private killAgentQuietly(): void {
    if (!this.alive) return;
    this.alive = false;
    this.thawAgent();
    this.dcs.setReachable(false);
    void this.dcs.close();
    void this.loop.stop({ releaseLeader: false, stopDatabase: false }).catch(() => undefined);
  }

  /** Cuts (false) or heals (true) this node's link to the DCS. */
  setDcsLink(up: boolean): void {
    this.dcsLinkUp = up;
    if (this.alive) this.dcs.setReachable(up);
  }

  /**
   * Cuts this machine off from the other nodes (true) or links it again (false): no REST call
   * and no WAL crosses the cut either way; it still reaches the DCS, and clients reach it.
   */
  setCutOff(cut: boolean): void {
    this.sim.network.setCutOff(this.db.connUrl, cut);
  }

  /** Cut off from the other nodes (setCutOff): their agents and servers and its own do not reach each other. */
  get cutOff(): boolean {
    return this.sim.network.isCutOff(this.db.connUrl);
  }

  /** The agent runs and answers (not dead, not frozen). */
  get answering(): boolean {
    return this.alive && !this.frozen;
  }

  /** Holds a valid leader lock (by its own deadline) right now. */
  believesLeader(): boolean {
    const until = this.alive ? this.loop.lockHeldUntil() : null;
    return until !== null && this.sim.clock.now() < until;
  }
}

/** Routes one node's PeerApi calls to the simulated agents' snapshots. */
class SimPeerApi implements PeerApi {
  constructor(
    private readonly sim: SimCluster,
    private readonly caller: SimNode,
  ) {}

  /** A cut lies between the caller and `node`: the call is dropped, and the caller gives up after its timeout, as over HTTP. */
  private acrossCut(node: SimNode): boolean {
    return node !== this.caller && (node.cutOff || this.caller.cutOff);
  }

  async fetchStatus(apiUrl: string, timeoutMs: number, opts?: { readonly fresh?: boolean }): Promise<NodeStatus | null> {
    const node = this.sim.byApiUrl(apiUrl);
    if (node && this.acrossCut(node)) return this.sim.clock.sleep(timeoutMs).then(() => null);
    if (!node || !node.answering) return null;
    if (!opts?.fresh) return node.loop.snapshot().status;
    // The probe waits while the agent is frozen: the caller gives up after its timeout, as over HTTP.
    const stop = new AbortController();
    const status = await Promise.race([
      node.loop.freshStatus(),
      this.sim.clock.sleep(timeoutMs, stop.signal).then(() => null, () => null),
    ]);
    stop.abort();
    // An agent killed or frozen while it probed sends no answer.
    return node.answering ? status : null;
  }

  async postFailsafe(apiUrl: string, body: { readonly name: string; readonly members: Readonly<Record<string, string>> }, timeoutMs: number): Promise<boolean> {
    const node = this.sim.byApiUrl(apiUrl);
    if (node !== undefined && this.acrossCut(node)) return this.sim.clock.sleep(timeoutMs).then(() => false);
    return node !== undefined && node.answering && node.loop.acceptFailsafe(body);
  }

  async fetchEvents(): Promise<readonly ClusterEvent[]> {
    return [];
  }
}

/**
 * Several agents on one InMemoryKeyValueSpace, FakeDatabaseNetwork and FakeClock: the scenario
 * tests and the randomized simulation drive it by moving fake time.
 */
export class SimCluster {
  readonly clock = new FakeClock();
  readonly store: InMemoryKeyValueSpace;
  readonly network = new FakeDatabaseNetwork();
  readonly nodes = new Map<string, SimNode>();
  readonly config: RawConfig;
  readonly verboseLogs: boolean;
  readonly stepMs: number;

  constructor(opts: SimClusterOptions) {
    this.store = new InMemoryKeyValueSpace(this.clock, { unavailableDelayMs: opts.dcsFailDelayMs ?? 0 });
    this.config = opts.config ?? { ttl: 30, loop_wait: 10, retry_timeout: 10 };
    this.verboseLogs = opts.verboseLogs ?? false;
    this.stepMs = opts.stepMs ?? 250;
    for (const name of opts.names) this.nodes.set(name, new SimNode(name, this, opts.nodes?.[name] ?? {}));
  }

  /** conn_url of a simulated node's database. */
  static connUrl(name: string): string {
    return `postgres://${name}:5432/postgres`;
  }

  node(name: string): SimNode {
    const n = this.nodes.get(name);
    if (!n) throw new Error(`no simulated node ${name}`);
    return n;
  }

  byApiUrl(apiUrl: string): SimNode | undefined {
    return [...this.nodes.values()].find((n) => n.apiUrl === apiUrl);
  }

  /** Starts the agent of every node (or of the named ones). */
  startAll(names?: readonly string[]): void {
    for (const n of names ?? [...this.nodes.keys()]) this.node(n).startAgent();
  }

  /** Checks run after every step (split brain is always checked). */
  readonly checks: (() => void)[] = [];

  /** Moves fake time by `ms` in steps, expiring leases and letting replicas stream after each. */
  async advance(ms: number): Promise<void> {
    let left = ms;
    while (left > 0) {
      const step = Math.min(this.stepMs, left);
      await this.clock.advance(step);
      this.store.expireLeases();
      this.network.replicate();
      this.assertNoSplitBrain();
      for (const check of this.checks) check();
      left -= step;
    }
  }

  /** Throws when two nodes accept writes at the same time, whatever they believe about the lock. */
  assertNoSplitBrain(): void {
    const both = this.writable();
    if (both.length > 1) throw new Error(`split brain: ${both.map((n) => n.name).join(', ')} accept writes\n${this.describe()}`);
  }

  /** Deletes the leader key when it still names `name` (what a fencer does for its dead agent). */
  async releaseLeaderOf(name: string): Promise<void> {
    if (!this.store.reachable) return;
    await new InMemoryKeyValue(this.store, { clientId: 'fencer' }).delete('leader', { value: name }).catch(() => false);
  }

  /**
   * What `name`'s fencer does once it stopped the server of a lock holder, as the real one:
   * puts back the sync key of a promotion that never happened, then (`release`: its agent
   * died) releases the lock.
   */
  async afterFenceOf(name: string, server: StoppedServer, release: boolean): Promise<void> {
    if (!this.store.reachable) return;
    const node = this.node(name);
    // The fencer shares its machine's link to the DCS (the release keeps the model of earlier fault models).
    if (!node.dcsLinkUp) return release ? this.releaseLeaderOf(name) : undefined;
    const logger = node.logger;
    const store = new InMemoryClusterStore(this.store, { clientId: `fencer-${name}`, logger, watchedCopy: false });
    await undoUnfinishedPromotion(store, name, async () => server, logger);
    if (release) await this.releaseLeaderOf(name);
  }

  /** The DCS loses every key (a restore of an empty etcd, a new namespace): each key is deleted, its watchers told. */
  async wipeDcs(): Promise<void> {
    const admin = new InMemoryKeyValue(this.store, { clientId: 'admin' });
    for (const key of this.store.allKeys()) await admin.delete(key);
  }

  /** Writes a key as an operator (or the REST API) would; false when the DCS is down. */
  async putKey(key: string, value: string): Promise<boolean> {
    // A failing call would wait on the fake clock, which only this caller moves.
    if (!this.store.reachable || !this.store.writable) return false;
    const admin = new InMemoryKeyValue(this.store, { clientId: 'admin' });
    try {
      return await admin.put(key, value);
    } catch {
      return false;
    }
  }

  /** Advances until `pred` holds (checked after every step); throws after `timeoutMs` of fake time. */
  async until(pred: () => boolean, timeoutMs: number, what = 'condition'): Promise<number> {
    const start = this.clock.now();
    while (!pred()) {
      if (this.clock.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms of fake time waiting for ${what}\n${this.describe()}`);
      await this.advance(this.stepMs);
    }
    return this.clock.now() - start;
  }

  /** The cluster as the DCS holds it right now. */
  view(): Cluster {
    return parseCluster(this.store.range('')).cluster;
  }

  /** Name in the leader key, or null. */
  leaderKey(): string | null {
    this.store.expireLeases();
    return this.store.peek('leader')?.value || null;
  }

  /** The members the last leader listed in the failsafe key; null without one (or unreadable). */
  failsafeMembers(): string[] | null {
    const raw = this.store.peek('failsafe')?.value;
    if (!raw) return null;
    try {
      return Object.keys(JSON.parse(raw) as Record<string, unknown>);
    } catch {
      return null;
    }
  }

  /** Nodes whose database accepts writes. */
  writable(): SimNode[] {
    return [...this.nodes.values()].filter((n) => n.db.isWritable);
  }

  /** The single node that holds the lock and runs writable, or null. */
  primary(): SimNode | null {
    const p = [...this.nodes.values()].filter((n) => n.believesLeader() && n.db.isWritable);
    return p.length === 1 ? p[0]! : null;
  }

  /** Nodes that believe they hold the lock and accept writes: more than one is split brain. */
  splitBrain(): SimNode[] {
    return [...this.nodes.values()].filter((n) => n.believesLeader() && n.db.isWritable);
  }

  /** Stops every agent (for test cleanup), without waiting on fake time. */
  shutdown(): void {
    for (const n of this.nodes.values()) n.killAgent();
  }

  /** One line per node, for failure messages. */
  describe(): string {
    const lines = [`t=${this.clock.now()} leader key=${this.leaderKey() ?? '-'}`];
    for (const n of this.nodes.values()) {
      lines.push(
        `  ${n.name}: agent=${n.alive ? 'up' : 'down'} dcs=${n.dcsLinkUp ? 'up' : 'cut'} db=${n.db.state}${n.db.isWritable ? ' writable' : n.db.isInRecovery ? ' replica' : ''}` +
          ` tl=${n.db.timeline ?? '-'} lsn=${n.db.lsn ?? '-'} lock=${n.believesLeader()}${n.frozen ? ' FROZEN' : ''} job=${n.alive ? n.loop.jobInProgress ?? '-' : '-'}` +
          ` last="${n.alive ? n.loop.snapshot().status.role : ''}"`,
      );
    }
    return lines.join('\n');
  }
}
