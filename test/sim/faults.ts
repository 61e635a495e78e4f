import { failoverToJson } from '../../src/adapters/cluster-store/codec.js';
import type { FakeDatabaseOp } from '../../src/adapters/database/fake-database.js';
import type { Random } from './random.js';
import { randomTimings } from './timings.js';
import type { SimCluster, SimNode } from './sim-cluster.js';

/** Every kind of event a schedule is made of. */
export const EVENT_WEIGHTS = {
  crashMachine: 3,
  killAgent: 2,
  freezeAgent: 2,
  thawAgent: 3,
  startAgent: 6,
  crashDatabase: 3,
  dcsDown: 1,
  dcsUp: 2,
  partition: 3,
  healPartition: 4,
  clockStep: 1,
  slowOps: 2,
  fastOps: 2,
  failNext: 1,
  switchover: 2,
  failover: 1,
  scheduledSwitchover: 1,
  restart: 2,
  reinitialize: 1,
  pause: 1,
  resume: 2,
} as const;

/** The events of fault model v5: every earlier one, and a database frozen (SIGSTOP of all its processes) and thawed. */
export const EVENT_WEIGHTS_V5 = { ...EVENT_WEIGHTS, freezeDatabase: 2, thawDatabase: 3 } as const;

/** The events of fault model v6: every earlier one, and a replica's replication link cut (it stays connected, nothing arrives) and healed. */
export const EVENT_WEIGHTS_V6 = { ...EVENT_WEIGHTS_V5, cutReplication: 2, healReplication: 3 } as const;

/** The events of fault model v7: every earlier one, and an operator switching synchronous_mode between true and quorum (and the node count) while it runs. */
export const EVENT_WEIGHTS_V7 = { ...EVENT_WEIGHTS_V6, changeSyncMode: 1 } as const;

/**
 * The events of fault model v8: every earlier one, and an agent stopped cleanly (SIGTERM): it
 * stops its server and releases its lock, or in pause leaves the server running (a primary's
 * lock under its fencer's guard) for the next start to take over.
 */
export const EVENT_WEIGHTS_V8 = { ...EVENT_WEIGHTS_V7, stopAgent: 2 } as const;

/** The events of fault model v9: every earlier one, and an operator changing ttl, loop_wait and retry_timeout while the cluster runs. */
export const EVENT_WEIGHTS_V9 = { ...EVENT_WEIGHTS_V8, changeTimings: 1 } as const;

/**
 * The events of fault model v10: every earlier one, and a member's pre_promote fencing script
 * refusing (and working again): that member takes the key and gives it back instead of promoting.
 */
export const EVENT_WEIGHTS_V10 = { ...EVENT_WEIGHTS_V9, refusePromote: 1, allowPromote: 2 } as const;

/**
 * The events of fault model v13: every earlier one, and etcd losing its quorum (no raft leader:
 * reads still answered, every write and keep-alive waits retry_timeout or fails at once, no
 * lease expires) and getting it back (every lease granted its full TTL again), and an operator
 * turning failsafe mode on or off.
 */
export const EVENT_WEIGHTS_V13 = { ...EVENT_WEIGHTS_V10, quorumLost: 1, quorumBack: 2, toggleFailsafe: 1 } as const;

/**
 * The events of fault model v14: every earlier one, and a trap: the agent of the next node to
 * promote is killed while its promotion runs, or once its server is writable and before it
 * named a synchronous standby again (its fencer must tell the two apart); one node's promotion
 * also takes 1-5 s.
 */
export const EVENT_WEIGHTS_V14 = { ...EVENT_WEIGHTS_V13, trapPromotion: 2 } as const;

/**
 * The events of fault model v16: every earlier one, and a node cut off from the other nodes
 * while it still reaches the DCS (no REST call, no WAL across the cut; clients still reach it)
 * and linked again: the leader race then sees a member only by its member key.
 */
export const EVENT_WEIGHTS_V16 = { ...EVENT_WEIGHTS_V14, cutFromNodes: 2, healNodes: 3 } as const;

/**
 * The events of fault model v17: every earlier one, and leases revoked before their time while
 * their agents run: the leader's alone (an operator's `etcdctl lease revoke`), or every lease
 * at once (an etcd raft leader resumed after a freeze longer than the TTLs, etcd issue 15247).
 * The leader key and the old leader's member key go together, its server still writable.
 */
export const EVENT_WEIGHTS_V17 = { ...EVENT_WEIGHTS_V16, revokeLeases: 1 } as const;

/** Name of an event kind. */
export type EventKind = keyof typeof EVENT_WEIGHTS_V17;

/**
 * The faults that hit a bootstrap in fault model v11 (while initdb, the start and the
 * post_bootstrap script run): machines, agents and servers dying, freezing and stopping,
 * the DCS and its links going down, slow and failing operations, a pause.
 */
export const BOOTSTRAP_EVENT_WEIGHTS: Partial<Record<EventKind, number>> = {
  crashMachine: 3,
  killAgent: 4,
  stopAgent: 2,
  freezeAgent: 2,
  thawAgent: 1,
  startAgent: 2,
  crashDatabase: 2,
  freezeDatabase: 1,
  dcsDown: 1,
  dcsUp: 1,
  partition: 2,
  healPartition: 1,
  slowOps: 2,
  failNext: 1,
  pause: 1,
  clockStep: 1,
};

/**
 * The events of the first fault model (no agent freezes): seeds found with it replay only
 * with it, so regression seeds name the model they were found with.
 */
export const EVENT_WEIGHTS_V1: Partial<Record<EventKind, number>> = Object.fromEntries(
  Object.entries(EVENT_WEIGHTS).filter(([k]) => k !== 'freezeAgent' && k !== 'thawAgent'),
);

/**
 * Which fault model a schedule draws from: `v1` without agent freezes and with clients writing
 * only to the primary; `v2` every fault; `v3` also random topology tags on the nodes
 * (failover_priority, sync_priority, replicatefrom, nostream); `v4` also, in one schedule of
 * four, a maximum_lag_on_failover of a few writes; `v5` also databases frozen and thawed;
 * `v6` also replication links cut and healed; `v7` also synchronous_mode changed between
 * true and quorum, and synchronous_node_count, while the cluster runs; `v8` also agents
 * stopped cleanly (in pause, leaving their servers running); `v9` also ttl, loop_wait and
 * retry_timeout changed while the cluster runs; `v10` also every node's pre_promote script
 * refusing and working again, and (as v3 to v6 had, v7 to v9 not) random topology tags, now
 * with clonefrom, a random maximum_lag_on_failover, and in synchronous modes a random
 * maximum_lag_on_syncnode; `v11` also a post_bootstrap script on every node that takes time
 * and fails its first runs at random, while the bootstrap is hit by faults of every kind;
 * `v12` also nodes whose etcd client does not trust watch progress answers (an old etcd
 * release), so their copy is confirmed by full reads and their lock renewed after one;
 * `v13` also etcd losing its quorum while reads are still answered (EVENT_WEIGHTS_V13); `v14`
 * also agents killed in the middle of a promotion (EVENT_WEIGHTS_V14); `v15` also a client
 * commit on the trapped server once writable, just before its agent is killed (acknowledged by
 * it alone: only that server holds it); `v16` also nodes cut off from the other nodes while
 * they reach the DCS (EVENT_WEIGHTS_V16); `v17` also leases revoked before their time
 * (EVENT_WEIGHTS_V17).
 */
export type FaultModel = 'v1' | 'v2' | 'v3' | 'v4' | 'v5' | 'v6' | 'v7' | 'v8' | 'v9' | 'v10' | 'v11' | 'v12' | 'v13' | 'v14' | 'v15' | 'v16' | 'v17';

/** Every fault model, oldest first. */
export const FAULT_MODELS: readonly FaultModel[] = ['v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v8', 'v9', 'v10', 'v11', 'v12', 'v13', 'v14', 'v15', 'v16', 'v17'];

/** The fault model of new schedules. */
export const CURRENT_FAULT_MODEL: FaultModel = 'v17';

/** The event weights of `model`. */
function weightsOf(model: FaultModel): Partial<Record<EventKind, number>> {
  if (model === 'v1') return EVENT_WEIGHTS_V1;
  if (model === 'v17') return EVENT_WEIGHTS_V17;
  if (model === 'v16') return EVENT_WEIGHTS_V16;
  if (model === 'v14' || model === 'v15') return EVENT_WEIGHTS_V14;
  if (model === 'v13') return EVENT_WEIGHTS_V13;
  if (model === 'v10' || model === 'v11' || model === 'v12') return EVENT_WEIGHTS_V10;
  if (model === 'v9') return EVENT_WEIGHTS_V9;
  if (model === 'v8') return EVENT_WEIGHTS_V8;
  if (model === 'v7') return EVENT_WEIGHTS_V7;
  if (model === 'v6') return EVENT_WEIGHTS_V6;
  return model === 'v5' ? EVENT_WEIGHTS_V5 : EVENT_WEIGHTS;
}

const SLOW_OPS: readonly FakeDatabaseOp[] = ['start', 'stop', 'promote', 'checkpoint', 'follow', 'createReplica', 'rewind', 'restart', 'probe'];
const FAILING_OPS: readonly FakeDatabaseOp[] = ['start', 'promote', 'stop', 'rewind', 'createReplica', 'follow'];

/** Fault state the liveness check needs: what is broken right now. */
export class FaultState {
  dcsDown = false;
  paused = false;
  /** Nodes with injected delays: until when an operation may still be slow (Infinity while the delay is set). */
  private readonly slowUntil = new Map<string, number>();
  /** Longest delay injected per node (an operation started before the delay was cleared runs that long). */
  private readonly longestDelay = new Map<string, number>();

  /** Injects a delay on a node. */
  setSlow(name: string, ms: number): void {
    this.slowUntil.set(name, Infinity);
    this.longestDelay.set(name, Math.max(ms, this.longestDelay.get(name) ?? 0));
  }

  /** Clears a node's delays at `now`; an operation already under way may still take its full delay. */
  clearSlow(name: string, now: number): void {
    if (this.slowUntil.get(name) === Infinity) this.slowUntil.set(name, now + (this.longestDelay.get(name) ?? 0));
    this.longestDelay.delete(name);
  }

  /** The node's database may still be slowed down at `now`. */
  isSlow(name: string, now: number): boolean {
    return (this.slowUntil.get(name) ?? 0) > now;
  }

  /** When the last delayed operation under way can end at the latest (at least `now`). */
  slowEnd(now: number): number {
    return Math.max(now, ...this.slowUntil.values());
  }
  /** Last time something was broken or an operator acted (liveness windows start after it). */
  lastDisturbance = 0;
  /** Candidate of the last manual failover written: the operator accepted losing writes if it wins without a leader. */
  manualFailoverTo: string | null = null;
  /** Nodes whose agent is killed during their next promotion (model v14): while it runs, or once the server is writable; the first caught disarms them all. */
  readonly promotionTraps = new Map<string, 'during' | 'writable'>();
  /** Nodes whose pre_promote script refuses now (model v10): the cluster may rightly stay without a primary meanwhile. */
  readonly refusing = new Set<string>();

  /**
   * A node's script works again at `now`: a node it refused may wait out its backoff (at most
   * `ttlMs`) before it races again, so liveness windows start after that.
   */
  allowPromotion(name: string, now: number, ttlMs: number): void {
    if (!this.refusing.delete(name)) return;
    this.lastDisturbance = Math.max(this.lastDisturbance, now + ttlMs);
  }
}

/**
 * Applies one random event to the cluster. Returns a short description for the replay log.
 * Operator commands go where the REST API would put them (failover key, config key, loop).
 */
export async function applyRandomEvent(
  sim: SimCluster,
  rnd: Random,
  faults: FaultState,
  baseConfig: Record<string, unknown>,
  model: FaultModel = CURRENT_FAULT_MODEL,
  weights: Partial<Record<EventKind, number>> = weightsOf(model),
): Promise<string> {
  const kind = rnd.weighted(weights as Record<EventKind, number>);
  const nodes = [...sim.nodes.values()];
  const node: SimNode = rnd.pick(nodes);
  faults.lastDisturbance = Math.max(faults.lastDisturbance, sim.clock.now());
  switch (kind) {
    case 'crashMachine':
      node.crash();
      return `crash machine ${node.name}`;
    case 'killAgent':
      node.killAgent();
      return `kill agent ${node.name}`;
    case 'trapPromotion': {
      const ms = rnd.int(1, 5) * 1000;
      node.db.setDelay('promote', ms);
      faults.setSlow(node.name, ms);
      // Every node is armed (the next to promote is the one caught); the trapped node's promotion is also slow.
      const when = rnd.pick(['during', 'writable'] as const);
      for (const n of nodes) faults.promotionTraps.set(n.name, when);
      return `kill the agent of the next node to promote (${when === 'during' ? 'while it promotes' : 'once its server is writable, before it rewrote the sync key'}; promote on ${node.name} takes ${ms} ms)`;
    }
    case 'stopAgent':
      if (!node.alive || node.frozen) return `stop agent: ${node.name} agent is down or frozen`;
      node.stopAgent();
      return `stop agent ${node.name} (SIGTERM)`;
    case 'freezeAgent':
      if (!node.alive) return `freeze agent: ${node.name} agent is down`;
      node.freezeAgent();
      return `freeze agent ${node.name} (SIGSTOP)`;
    case 'thawAgent': {
      const frozen = nodes.filter((n) => n.frozen);
      if (!frozen.length) return 'thaw agent: none frozen';
      const n = rnd.pick(frozen);
      n.thawAgent();
      return `thaw agent ${n.name} (SIGCONT)`;
    }
    case 'startAgent': {
      const dead = nodes.filter((n) => !n.alive);
      if (!dead.length) return 'start agent: none dead';
      const n = rnd.pick(dead);
      n.startAgent();
      return `start agent ${n.name}`;
    }
    case 'crashDatabase':
      node.db.crash();
      return `crash database ${node.name}`;
    case 'freezeDatabase':
      if (!node.db.isRunning || node.db.isFrozen) return `freeze database: ${node.name} is not running or frozen already`;
      node.db.freeze();
      return `freeze database ${node.name} (SIGSTOP of its processes)`;
    case 'thawDatabase': {
      const frozen = nodes.filter((n) => n.db.isFrozen);
      if (!frozen.length) return 'thaw database: none frozen';
      const n = rnd.pick(frozen);
      n.db.thaw();
      return `thaw database ${n.name} (SIGCONT)`;
    }
    case 'cutReplication':
      if (!node.db.isInRecovery || node.db.isReplicationPaused) return `cut replication: ${node.name} is not a running replica or is cut already`;
      node.db.setReplicationPaused(true);
      return `cut ${node.name}'s replication link (connected, nothing arrives)`;
    case 'healReplication': {
      const cut = nodes.filter((n) => n.db.isReplicationPaused);
      if (!cut.length) return 'heal replication: none cut';
      const n = rnd.pick(cut);
      n.db.setReplicationPaused(false);
      n.db.pullFromUpstream();
      return `heal ${n.name}'s replication link`;
    }
    case 'cutFromNodes':
      if (node.cutOff) return `cut ${node.name} from the other nodes: cut already`;
      node.setCutOff(true);
      return `cut ${node.name} from the other nodes (it still reaches the DCS, clients still reach it)`;
    case 'healNodes': {
      const cut = nodes.filter((n) => n.cutOff);
      if (!cut.length) return 'link a node to the others again: none cut';
      const n = rnd.pick(cut);
      n.setCutOff(false);
      sim.network.replicate();
      return `link ${n.name} to the other nodes again`;
    }
    case 'dcsDown':
      sim.store.setReachable(false);
      faults.dcsDown = true;
      return 'DCS down';
    case 'dcsUp':
      sim.store.setReachable(true);
      faults.dcsDown = false;
      return 'DCS up';
    case 'revokeLeases': {
      if (rnd.chance(0.5)) {
        const holder = sim.leaderKey();
        return sim.store.revokeLeasesEarly('leader') ? `the leader ${holder}'s lease revoked (its agent still runs)` : 'revoke the leader\'s lease: no leader key';
      }
      sim.store.revokeLeasesEarly();
      return 'every lease revoked at once (a resumed etcd raft leader)';
    }
    case 'quorumLost':
      sim.store.setWritable(false);
      return 'etcd loses its quorum (reads answered, writes not)';
    case 'quorumBack':
      sim.store.setWritable(true);
      return 'etcd has a leader again';
    case 'partition':
      node.setDcsLink(false);
      return `partition ${node.name} from the DCS`;
    case 'healPartition':
      node.setDcsLink(true);
      return `heal ${node.name}'s DCS link`;
    case 'clockStep': {
      const jump = rnd.int(1, 60) * 1000;
      sim.clock.set(sim.clock.now() + jump);
      // Nobody could act during the jump: liveness windows start after it.
      faults.lastDisturbance = sim.clock.now();
      return `clock steps ${jump} ms`;
    }
    case 'slowOps': {
      const op = rnd.pick(SLOW_OPS);
      const ms = op === 'probe' ? rnd.int(100, 2000) : rnd.int(1, 40) * 1000;
      node.db.setDelay(op, ms);
      faults.setSlow(node.name, ms);
      return `slow ${op} on ${node.name}: ${ms} ms`;
    }
    case 'fastOps':
      node.db.clearFaults();
      faults.clearSlow(node.name, sim.clock.now());
      return `clear faults on ${node.name}`;
    case 'failNext': {
      const op = rnd.pick(FAILING_OPS);
      node.db.failNext(op);
      return `next ${op} fails on ${node.name}`;
    }
    case 'switchover':
    case 'failover':
    case 'scheduledSwitchover': {
      const leader = sim.leaderKey();
      const candidate = rnd.chance(0.7) ? rnd.pick(nodes).name : null;
      if (kind === 'failover') {
        if (!candidate) return 'failover: no candidate';
        if (!(await sim.putKey('failover', failoverToJson({ leader: null, member: candidate, scheduledAt: null })))) return 'failover: DCS down';
        faults.manualFailoverTo = candidate;
        return `failover to ${candidate}`;
      }
      if (!leader) return `${kind}: no leader`;
      const atMs = sim.clock.now() + rnd.int(2, 60) * 1000;
      const at = kind === 'scheduledSwitchover' ? new Date(atMs).toISOString() : null;
      // The operator's action happens at T: liveness windows start then.
      if (at) faults.lastDisturbance = atMs;
      if (!(await sim.putKey('failover', failoverToJson({ leader, member: candidate === leader ? null : candidate, scheduledAt: at })))) return `${kind}: DCS down`;
      return `${kind} from ${leader} to ${candidate ?? 'any'}${at ? ` at ${at}` : ''}`;
    }
    case 'restart':
      if (!node.alive) return `restart: ${node.name} agent is down`;
      void node.loop.restartNow({}).catch(() => undefined);
      return `restart ${node.name}`;
    case 'reinitialize': {
      if (!node.alive) return `reinitialize: ${node.name} agent is down`;
      const force = rnd.chance(0.5);
      void node.loop.reinitialize({ force, fromLeader: rnd.chance(0.5) }).catch(() => undefined);
      return `reinitialize ${node.name}${force ? ' (force)' : ''}`;
    }
    case 'changeSyncMode': {
      // Synchronous replication stays on (the acknowledged-writes check counts on it): true <-> quorum, 1 or 2 standbys.
      if (baseConfig['synchronous_mode'] === false || baseConfig['synchronous_mode'] === undefined) return 'change synchronous_mode: replication is asynchronous';
      baseConfig['synchronous_mode'] = baseConfig['synchronous_mode'] === 'quorum' ? true : 'quorum';
      baseConfig['synchronous_node_count'] = rnd.int(1, 2);
      if (!(await sim.putKey('config', JSON.stringify({ ...baseConfig, ...(faults.paused ? { pause: true } : {}) })))) return 'change synchronous_mode: DCS down';
      return `synchronous_mode ${String(baseConfig['synchronous_mode'])}, synchronous_node_count ${String(baseConfig['synchronous_node_count'])}`;
    }
    case 'changeTimings': {
      // Drawn as a schedule's own timings are (randomTimings): always a window the fencer accepts.
      Object.assign(baseConfig, randomTimings(rnd, false));
      if (!(await sim.putKey('config', JSON.stringify({ ...baseConfig, ...(faults.paused ? { pause: true } : {}) })))) return 'change timings: DCS down';
      return `ttl ${String(baseConfig['ttl'])}, loop_wait ${String(baseConfig['loop_wait'])}, retry_timeout ${String(baseConfig['retry_timeout'])}`;
    }
    case 'toggleFailsafe': {
      baseConfig['failsafe_mode'] = baseConfig['failsafe_mode'] !== true;
      if (!(await sim.putKey('config', JSON.stringify({ ...baseConfig, ...(faults.paused ? { pause: true } : {}) })))) return 'toggle failsafe mode: DCS down';
      return `failsafe mode ${baseConfig['failsafe_mode'] ? 'on' : 'off'}`;
    }
    case 'refusePromote':
      if (!node.options.hooks) return 'refuse promotion: no pre_promote script in this model';
      node.options.hooks.set('pre_promote', 'fails', 'fencing device does not answer');
      faults.refusing.add(node.name);
      return `${node.name}'s pre_promote script refuses`;
    case 'allowPromote': {
      const refusing = nodes.filter((n) => faults.refusing.has(n.name));
      if (!refusing.length) return 'allow promotion: no script refuses';
      const n = rnd.pick(refusing);
      n.options.hooks?.set('pre_promote', 'succeeds');
      faults.allowPromotion(n.name, sim.clock.now(), Number(baseConfig['ttl']) * 1000);
      return `${n.name}'s pre_promote script works again`;
    }
    case 'pause':
      if (!(await sim.putKey('config', JSON.stringify({ ...baseConfig, pause: true })))) return 'pause: DCS down';
      faults.paused = true;
      return 'pause';
    case 'resume':
      if (!(await sim.putKey('config', JSON.stringify(baseConfig)))) return 'resume: DCS down';
      faults.paused = false;
      return 'resume';
  }
}

/**
 * Kills the agents of trapped nodes whose promotion runs now (model v14); from v15 a trapped
 * writable server first acknowledges a client commit (its synchronous standbys are not named
 * yet: that commit is on it alone). What happened, for the replay log.
 */
export function springPromotionTraps(sim: SimCluster, faults: FaultState, model: FaultModel = CURRENT_FAULT_MODEL): string[] {
  const out: string[] = [];
  for (const [name, when] of [...faults.promotionTraps]) {
    if (!faults.promotionTraps.has(name)) break;
    const node = sim.node(name);
    if (!node.alive || node.frozen) continue;
    if (when === 'during' && node.loop.jobInProgress !== 'promote') continue;
    // Writable, while the sync key it wrote before promoting still stands (its commits may be on it alone).
    const sync = when === 'writable' ? sim.view().sync : null;
    if (when === 'writable' && !(node.db.isWritable && sync?.leader === name && sync.promoting !== undefined)) continue;
    faults.promotionTraps.clear();
    const writable = node.db.isWritable;
    // Acknowledged before the write's first await when no synchronous standby is named.
    const alone = writable && model !== 'v14' ? node.db.write(256).catch(() => undefined) : null;
    node.killAgent();
    out.push(`trap: killed agent ${name} during its promotion (its server ${writable ? 'writable already' : 'still in recovery'})${alone ? ', after a client commit on it' : ''}`);
  }
  return out;
}

/** Ends every fault: all agents up, the DCS and every link up, no delays, not paused. */
export async function healEverything(sim: SimCluster, faults: FaultState, baseConfig: Record<string, unknown>): Promise<void> {
  faults.promotionTraps.clear();
  sim.store.setReachable(true);
  sim.store.setWritable(true);
  faults.dcsDown = false;
  for (const n of sim.nodes.values()) {
    n.setDcsLink(true);
    n.setCutOff(false);
    n.thawAgent();
    n.db.thaw();
    n.db.setReplicationPaused(false);
    n.db.clearFaults();
    faults.clearSlow(n.name, sim.clock.now());
    if (faults.refusing.has(n.name)) {
      n.options.hooks?.set('pre_promote', 'succeeds');
      faults.allowPromotion(n.name, sim.clock.now(), Number(baseConfig['ttl']) * 1000);
    }
    // An agent still stopping cleanly (waiting on a slow operation) starts again once it is done.
    if (!n.alive || n.stopping) n.startAgent();
  }
  await sim.putKey('config', JSON.stringify(baseConfig));
  faults.paused = false;
  // Healed once the slow operations already under way are over.
  faults.lastDisturbance = Math.max(faults.lastDisturbance, faults.slowEnd(sim.clock.now()));
}

/** A node is healthy: its agent runs, it reaches the DCS and the other nodes, nothing slows its database down, freezes it or cuts its replication, and its pre_promote script does not refuse. */
export function isHealthy(sim: SimCluster, faults: FaultState, n: SimNode): boolean {
  return n.alive && !n.frozen && !n.db.isFrozen && !n.db.isReplicationPaused && !n.cutOff && n.dcsLinkUp && !faults.dcsDown && !faults.isSlow(n.name, sim.clock.now()) && sim.store.reachable && sim.store.writable && !faults.refusing.has(n.name);
}
