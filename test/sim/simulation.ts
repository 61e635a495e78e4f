import { FakeHookScripts } from '../../src/adapters/callbacks/fake-hook-scripts.js';
import type { RawConfig } from '../../src/domain/cluster/config/config.js';
import { FakeDatabase } from '../../src/adapters/database/fake-database.js';
import { randomTimings } from './timings.js';
import { BOOTSTRAP_EVENT_WEIGHTS, CURRENT_FAULT_MODEL, FaultState, applyRandomEvent, healEverything, isHealthy, springPromotionTraps, type FaultModel } from './faults.js';
import { Random } from './random.js';
import { SimCluster, type SimNode, type SimNodeOptions } from './sim-cluster.js';
import type { FakeClock } from '../../src/adapters/clock/fake-clock.js';
import { PostBootstrapScript, SimHookScripts } from './sim-hooks.js';
import type { TagValue } from '../../src/domain/cluster/model/node.js';
import { canLead } from '../../src/domain/cluster/model/topology-tags.js';

/** conn_url of the remote primary a simulated standby cluster replicates from (standby_cluster host `remote`). */
export const REMOTE_CONN_URL = 'postgres://remote:5432/postgres';

/** Outcome of one random schedule. */
export interface ScheduleResult {
  readonly seed: number;
  readonly ok: boolean;
  /** The broken invariant, with the cluster state and the event log. */
  readonly violation: string | null;
  readonly nodes: number;
  readonly events: number;
  /** Times the leader changed (a new node became the writable lock holder; the standby leader in a standby cluster). */
  readonly leaderChanges: number;
  /** Times a fencer put back the sync key of a promotion that never happened (its agent died first). */
  readonly promotionsUndone: number;
  readonly acknowledgedWrites: number;
  /** Fake time simulated, ms. */
  readonly simulatedMs: number;
}

/** How a fencer's log line begins when it put back the sync key of a promotion that never happened. */
const UNDONE_PROMOTION = 'the server stopped before it promoted';

/** Options of one schedule. */
export interface ScheduleOptions {
  /**
   * `deep` (default): 6-16 events spread over minutes of cluster time, 500 ms steps.
   * `quick`: 2-5 events over about a minute, loop_wait 5 s, 2 s steps: the unit run's thousands.
   */
  readonly profile?: 'quick' | 'deep';
  /** Events in the schedule (default: by profile). */
  readonly events?: number;
  /** Print every event and the cluster state as it goes. */
  readonly trace?: (line: string) => void;
  /** The fault model (default the current one); older regression seeds replay with theirs. */
  readonly model?: FaultModel;
  /**
   * Simulate a standby cluster: its members replicate from a remote primary (a server outside
   * the cluster that clients keep writing to) and none may ever accept writes or leave the
   * remote's timeline; liveness asks for a standby leader following the remote instead of a
   * primary, and after healing every member must catch up with the remote.
   */
  readonly standby?: boolean;
}

class Violation extends Error {}

/**
 * Random topology tags (fault model v3), from a generator of their own: failover_priority
 * (0: never leads), sync_priority, replicatefrom another node (cycles included), nostream.
 * At least two nodes can lead, so a failover always has somewhere to go.
 */
function randomTags(seed: number, names: readonly string[], clonefrom = false): Record<string, Record<string, TagValue>> {
  const rnd = new Random(seed ^ 0x7a95);
  // clonefrom (model v10) from a generator of its own: the other tags stay those of v3.
  const clones = new Random(seed ^ 0xc10e);
  for (;;) {
    const out: Record<string, Record<string, TagValue>> = {};
    for (const n of names) {
      const t: Record<string, TagValue> = {};
      if (rnd.chance(0.25)) t['failover_priority'] = rnd.pick([0, 2, 3]);
      if (rnd.chance(0.2)) t['sync_priority'] = rnd.pick([0, 2]);
      if (rnd.chance(0.1)) t['nostream'] = true;
      else if (rnd.chance(0.25)) t['replicatefrom'] = rnd.pick(names.filter((x) => x !== n));
      if (clonefrom && clones.chance(0.3)) t['clonefrom'] = true;
      out[n] = t;
    }
    if (names.filter((n) => canLead(out[n]!)).length >= 2) return out;
  }
}

/** The dynamic config of a schedule: random timings within the rules, random sync and failsafe modes. */
/**
 * maximum_lag_on_failover (fault model v4), from a generator of their own so that the other
 * draws of a seed stay those of v3: in one schedule of four a few writes' worth (a client
 * writes 256 bytes), so candidates fall behind it and catch up from a member ahead; else 1 GiB.
 */
function randomMaxLag(seed: number): number {
  const rnd = new Random(seed ^ 0x51a9);
  return rnd.chance(0.25) ? rnd.pick([1024, 4096, 32768]) : 1024 ** 3;
}

/**
 * maximum_lag_on_syncnode (fault model v10, synchronous modes), from a generator of its own: in
 * one schedule of three a few writes' worth (a client writes 256 bytes), so synchronous
 * standbys drop out and come back with the load; else none.
 */
function randomSyncNodeLag(seed: number): number | null {
  const rnd = new Random(seed ^ 0x5c1a);
  return rnd.chance(1 / 3) ? rnd.pick([512, 2048, 16384]) : null;
}

function randomConfig(rnd: Random, quick: boolean): Record<string, unknown> {
  const { ttl, loop_wait: loopWait, retry_timeout: retry } = randomTimings(rnd, quick);
  const sync = rnd.weighted({ off: 3, on: 2, quorum: 1 });
  return {
    ttl,
    loop_wait: loopWait,
    retry_timeout: retry,
    maximum_lag_on_failover: 1024 ** 3,
    synchronous_mode: sync === 'off' ? false : sync === 'on' ? true : 'quorum',
    synchronous_mode_strict: sync !== 'off' && rnd.chance(0.25),
    synchronous_node_count: rnd.int(1, 2),
    failsafe_mode: rnd.chance(0.3),
    primary_start_timeout: rnd.pick([0, 30, 300]),
  };
}

/**
 * One random schedule: a 3-5 node cluster bootstraps, then random crashes, agent kills,
 * agent freezes (SIGSTOP), database crashes and freezes, DCS outages, node-DCS partitions, clock steps,
 * slow and failing database operations and operator commands hit it while clients write to
 * every node that accepts writes; each machine's fencer is modelled. After every step of fake
 * time: never two nodes that accept writes, whatever they believe about the lock; in synchronous mode every acknowledged write is on the current primary;
 * once a healthy majority (synchronous mode: every node) has been left alone for
 * ttl + loop_wait (+ two steps and a second; failsafe mode: + one more loop), there is a
 * writable primary (unless the leader key's holder is itself slowed down: it keeps its key
 * by design, or a node still believes the cluster paused, or, in failsafe mode, the only
 * healthy nodes that may lead were not listed by the last leader while a listed one is not
 * healthy: they must not race then).
 * Finally everything is healed and a primary must appear within the same bound.
 */
export async function runSchedule(seed: number, opts: ScheduleOptions = {}): Promise<ScheduleResult> {
  const rnd = new Random(seed);
  const model = opts.model ?? CURRENT_FAULT_MODEL;
  const count = rnd.int(3, 5);
  const names = Array.from({ length: count }, (_, i) => `n${i + 1}`);
  const quick = opts.profile === 'quick';
  const standby = opts.standby === true;
  const config: Record<string, unknown> = { ...randomConfig(rnd, quick), ...(standby ? { standby_cluster: { host: 'remote', port: 5432 } } : {}) };
  // v11 draws as v10 does, and adds the post_bootstrap script; v12 as v11, and adds distrusted progress answers; v13 as
  // v12, and adds etcd quorum losses to the events.
  const v12 = model === 'v12' || model === 'v13' || model === 'v14' || model === 'v15' || model === 'v16' || model === 'v17';
  const v11 = model === 'v11' || v12;
  const v10 = model === 'v10' || v11;
  const tags = model === 'v3' || model === 'v4' || model === 'v5' || model === 'v6' || v10 ? randomTags(seed, names, v10) : {};
  if (model === 'v4' || model === 'v5' || model === 'v6' || v10) config['maximum_lag_on_failover'] = randomMaxLag(seed);
  if (v10 && config['synchronous_mode'] !== false) {
    const lag = randomSyncNodeLag(seed);
    if (lag !== null) config['maximum_lag_on_syncnode'] = lag;
  }
  // A node tagged nostream restores the archive: the fake reads what the primary writes when a restore_command is set.
  if (Object.values(tags).some((t) => t['nostream'])) config['db'] = { parameters: { restore_command: 'cp /archive/%f %p' } };
  const stepMs = quick ? 2000 : 500;
  // The post_bootstrap script (model v11) from a generator of its own: the draws of v10 stay as they were.
  const scriptRnd = new Random(seed ^ 0x2b0075);
  const postBootstrap: PostBootstrapScript | null = v11 ? new PostBootstrapScript(scriptRnd, (): FakeClock => sim.clock, scriptRnd.int(0, 2)) : null;
  // Which nodes distrust their progress answers (model v12), from a generator of its own too: half the schedules
  // have none, the others each node with even odds (mixed releases during an etcd upgrade).
  const trustRnd = new Random(seed ^ 0x7e57ed);
  const someDistrust = v12 && trustRnd.chance(0.5);
  const distrusted = new Set(names.filter(() => someDistrust && trustRnd.chance(0.5)));
  const hooksOf = (n: string): SimNodeOptions =>
    postBootstrap ? { hooks: new SimHookScripts(postBootstrap, () => sim.node(n).db.systemIdentifier), postBootstrap: true } : v10 ? { hooks: new FakeHookScripts({ pre_promote: 'succeeds' }) } : {};
  const sim: SimCluster = new SimCluster({
    names,
    config: config as RawConfig,
    stepMs,
    // A DCS call against an unreachable store fails at once, or only after retry_timeout (as etcd3 would).
    dcsFailDelayMs: rnd.chance(0.5) ? 0 : Number(config['retry_timeout']) * 1000,
    nodes: Object.fromEntries(
      names.map((n) => [n, { watchdogMode: rnd.pick(['off', 'automatic', 'required'] as const), tags: tags[n] ?? {}, ...hooksOf(n), progressDistrusted: distrusted.has(n) }]),
    ),
  });
  // Timings an operator changes (model v9) count with the longest seen: a lease granted before the change runs its course.
  let ttl = 0;
  let loopWait = 0;
  let retryMs = 0;
  const noteTimings = () => {
    ttl = Math.max(ttl, Number(config['ttl']) * 1000);
    loopWait = Math.max(loopWait, Number(config['loop_wait']) * 1000);
    retryMs = Math.max(retryMs, Number(config['retry_timeout']) * 1000);
  };
  noteTimings();
  const maxLag = Number(config['maximum_lag_on_failover']);
  const smallLag = maxLag < 1024 ** 3;
  // Failsafe mode keeps a primary cut from the DCS until its key expired and one more failsafe round
  // (every loop_wait, plus retry_timeout for its failing DCS read) is refused: one more loop.
  // Catching up from a member ahead takes a follow job and one more tick.
  const boundNow = () => ttl + loopWait + (config['failsafe_mode'] ? loopWait + retryMs : 0) + 2 * stepMs + 1000 + (smallLag ? loopWait + 2 * stepMs : 0);
  /**
   * A node of `leaders` may lead as far as maximum_lag_on_failover goes: it is within the lag of
   * the status key's optime, or it is on the timeline of the member furthest ahead of `nodes`
   * and that member is within it (it streams from that member first; a timeline that forked off
   * would need a rewind, which a leaderless cluster does not do).
   */
  const withinLag = (nodes: readonly SimNode[], leaders: readonly SimNode[]): boolean => {
    if (!smallLag) return true;
    const optime = sim.view().status?.optime ?? null;
    if (optime === null) return true;
    let best: { tl: number; lsn: number } | null = null;
    for (const n of nodes) {
      const tl = n.db.timeline ?? 0;
      const lsn = n.db.lsn ?? 0;
      if (!best || tl > best.tl || (tl === best.tl && lsn > best.lsn)) best = { tl, lsn };
    }
    const close = (lsn: number) => optime - lsn <= maxLag;
    return leaders.some((l) => close(l.db.lsn ?? 0) || (best !== null && close(best.lsn) && (l.db.timeline ?? 0) === best.tl));
  };
  // A standby cluster has no synchronous replication of its own.
  const syncOn = !standby && config['synchronous_mode'] !== false;
  const remote = standby ? new FakeDatabase({ name: 'remote', connUrl: REMOTE_CONN_URL, network: sim.network, clock: sim.clock }) : null;
  /** The holder of the standby cluster's key, running in recovery from the remote. */
  const standbyLeader = (): SimNode | null => {
    const l = [...sim.nodes.values()].filter((n) => n.believesLeader() && n.db.isInRecovery && n.db.upstreamConnUrl === REMOTE_CONN_URL);
    return l.length === 1 ? l[0]! : null;
  };
  const led = () => (standby ? standbyLeader() !== null : sim.primary() !== null);
  const faults = new FaultState();
  const log: string[] = [`seed ${seed}: ${count} nodes${standby ? ' (standby cluster)' : ''}, config ${JSON.stringify(config)}${Object.values(tags).some((t) => Object.keys(t).length) ? `, tags ${JSON.stringify(tags)}` : ''}`];
  const trace = (line: string) => {
    log.push(`t=${sim.clock.now() - start} ${line}`);
    opts.trace?.(log[log.length - 1]!);
  };
  const start = sim.clock.now();
  let leaderChanges = 0;
  let lastPrimary: string | null = null;
  let checkedAcks = 0;
  const forgiven = new Set<number>();
  let healthySince: number | null = null;
  let orphanedSince: number | null = null;
  let requireLiveness = true;

  // Model v14: an agent killed in the middle of a promotion its node was trapped in (the trap event armed it).
  sim.checks.push(() => {
    for (const line of springPromotionTraps(sim, faults, model)) trace(line);
  });
  sim.checks.push(() => {
    noteTimings();
    // In a standby cluster the leader is the standby leader (it never writes: there is no write to lose).
    const p = standby ? standbyLeader() : sim.primary();
    const id = p ? `${p.name}@${p.db.timeline}` : null;
    if (p && id !== lastPrimary) {
      leaderChanges++;
      checkedAcks = 0;
      lastPrimary = id;
      // The seed allows a manual failover to lose writes: they are not counted against later primaries.
      if (p.name === faults.manualFailoverTo) {
        for (const w of sim.network.acknowledgedWrites) if (!p.db.hasWrite(w.id)) forgiven.add(w.id);
      }
      faults.manualFailoverTo = null;
    }
    if (p && syncOn) {
      const acked = sim.network.acknowledgedWrites;
      for (; checkedAcks < acked.length; checkedAcks++) {
        const w = acked[checkedAcks]!;
        if (!p.db.hasWrite(w.id) && !forgiven.has(w.id)) {
          throw new Violation(`acknowledged write ${w.id} (lsn ${w.lsn}, by ${w.by}) is missing on the primary ${p.name}`);
        }
      }
    }
    if (remote) {
      for (const n of sim.nodes.values()) {
        if (n.db.isWritable) throw new Violation(`${n.name}, a member of the standby cluster, accepts writes`);
        if ((n.db.timeline ?? 0) > (remote.timeline ?? 0)) throw new Violation(`${n.name}, a member of the standby cluster, left the remote's timeline (a promotion)`);
      }
      if (rnd.chance(0.3)) void remote.write(256).catch(() => undefined);
    }
    if (postBootstrap && !standby) {
      // A cluster is registered only with data its post_bootstrap script succeeded on.
      const init = sim.view().initialize;
      if (init && !postBootstrap.finished.has(init)) throw new Violation(`the cluster was registered with data ${init} whose post_bootstrap script never succeeded`);
    }
    if (model === 'v1') {
      if (p && rnd.chance(0.3)) void p.db.write(256).catch(() => undefined);
    } else {
      // Clients try every node: a server that accepts a write it should not is caught by the split-brain check.
      // Not a new cluster before its post_bootstrap script succeeded: no health check sends clients there (it may yet be undone).
      for (const n of sim.nodes.values()) if (n.db.isWritable && !n.db.isBootstrapUnfinished && rnd.chance(0.3)) void n.db.write(256).catch(() => undefined);
    }
    // In a standby cluster a member without data cannot lead before it has copied the remote (no member runs to copy from).
    const healthyNodes = [...sim.nodes.values()].filter((n) => isHealthy(sim, faults, n) && (!standby || n.db.isInitialized));
    const healthy = healthyNodes.length;
    // Failsafe mode: a node the last leader did not list races only when every listed member
    // answers it (one that does not may be that leader, still writing without the DCS).
    const listed = config['failsafe_mode'] ? sim.failsafeMembers() : null;
    const mayRace = (n: SimNode) => !listed || listed.length < 2 || listed.includes(n.name) || listed.every((m) => healthyNodes.some((h) => h.name === m));
    // A primary is owed only where a healthy node may lead (failover_priority 0 never does), and
    // (model v4) is within maximum_lag_on_failover of the last leader or can stream from a
    // member that is (see withinLag).
    // A node without a data directory cannot lead either: it has nobody to copy from while there is no primary.
    const leaders = healthyNodes.filter((n) => canLead(tags[n.name] ?? {}) && mayRace(n) && n.db.isInitialized);
    const enough = (syncOn ? healthy === count : healthy * 2 > count) && leaders.length > 0 && withinLag(healthyNodes, leaders);
    // A leader busy with a slow operation, or whose server is frozen, keeps its key by design
    // (primary_start_timeout bounds a start, and the wait for a server that does not answer).
    const holder = sim.leaderKey();
    const holderBusy = holder !== null && (faults.isSlow(holder, sim.clock.now()) || sim.nodes.get(holder)?.db.isFrozen === true);
    // A node cut from the DCS since a pause still believes in it (and, as primary, keeps running).
    const paused = faults.paused || [...sim.nodes.values()].some((n) => n.alive && n.loop.snapshot().config.pause);
    // The leader key sits on its holder's lease, which the holder's member record keeps alive: it never runs out while
    // that agent runs. An agent that stopped renewing the key (its own deadline passed) must give it up or take it
    // back, or every other member waits for a key that never expires.
    const holderNode = holder === null ? undefined : sim.nodes.get(holder);
    // (Only while it reaches the DCS: cut off, its lease runs out as any other.)
    const until = holderNode && isHealthy(sim, faults, holderNode) ? holderNode.loop.lockHeldUntil() : undefined;
    if (until !== undefined && (until === null || sim.clock.now() > until) && !holderBusy && !paused) {
      orphanedSince ??= sim.clock.now();
      if (sim.clock.now() - orphanedSince > ttl + loopWait + retryMs + 2 * stepMs) {
        throw new Violation(`the leader key names ${holder}, whose agent runs without renewing it (its lock ran out ${sim.clock.now() - orphanedSince} ms ago): nobody else can take it`);
      }
    } else orphanedSince = null;
    // A pre_promote script that refuses (model v10) may rightly keep every candidate from promoting (the others defer to one ahead).
    if (!enough || paused || holderBusy || faults.refusing.size > 0) {
      healthySince = null;
      return;
    }
    healthySince = Math.max(healthySince ?? sim.clock.now(), faults.lastDisturbance);
    if (requireLiveness && !led() && sim.clock.now() - healthySince > boundNow()) {
      const what = standby ? 'standby leader following the remote' : 'writable primary';
      throw new Violation(`no ${what} ${sim.clock.now() - healthySince} ms after a healthy ${syncOn ? 'cluster' : 'majority'} was left alone (bound ${boundNow()} ms)`);
    }
  });

  const events = opts.events ?? (quick ? rnd.int(2, 5) : rnd.int(6, 16));
  const maxGapSteps = quick ? 8 : 80;
  let violation: string | null = null;
  try {
    if (remote) {
      await remote.initdb();
      await remote.start({ upstream: null, timeoutMs: 1000 });
    }
    sim.startAll();
    if (postBootstrap) {
      // Faults of every kind while the cluster bootstraps and its script runs; then it must come up, registered.
      const storm = scriptRnd.int(0, 4);
      for (let i = 0; i < storm; i++) {
        await sim.advance(scriptRnd.int(1, 30) * stepMs);
        trace(`during the bootstrap: ${await applyRandomEvent(sim, scriptRnd, faults, config, model, BOOTSTRAP_EVENT_WEIGHTS)}`);
      }
      if (storm > 0) {
        await healEverything(sim, faults, config);
        trace('heal everything (bootstrap)');
      }
      await sim.until(() => led() && (standby || !!sim.view().initialize), 900_000, 'bootstrap, its post_bootstrap script included');
      trace(`bootstrapped (${postBootstrap.runs} post_bootstrap runs)`);
    } else {
      await sim.until(led, 120_000, 'bootstrap');
    }
    await sim.advance(rnd.int(1, quick ? 5 : 20) * 1000);
    for (let i = 0; i < events; i++) {
      trace(await applyRandomEvent(sim, rnd, faults, config, model));
      await sim.advance(rnd.int(1, maxGapSteps) * stepMs);
    }
    await healEverything(sim, faults, config);
    trace('heal everything');
    requireLiveness = false;
    // Delayed operations already under way end first; the bound runs from then.
    await sim.advance(faults.lastDisturbance - sim.clock.now());
    const bound = boundNow();
    await sim.until(led, bound, `a ${standby ? 'standby leader' : 'primary'} within ${bound} ms of healing`);
    requireLiveness = true;
    await sim.advance(quick ? loopWait : 2 * ttl);
    if (remote) {
      // Every member catches up with the remote (through the standby leader), none diverged.
      const last = remote.lsn ?? 0;
      const written = remote.writeIds();
      await sim.until(() => [...sim.nodes.values()].every((n) => n.db.isInRecovery && (n.db.lsn ?? 0) >= last), 4 * bound, 'every member caught up with the remote');
      for (const n of sim.nodes.values()) {
        const missing = written.filter((id) => !n.db.hasWrite(id));
        if (missing.length) throw new Violation(`${n.name} lacks write ${missing[0]} of the remote after catching up`);
      }
    }
  } catch (e) {
    violation = `${(e as Error).message}\n${sim.describe()}\nevents:\n  ${log.join('\n  ')}`;
  } finally {
    sim.shutdown();
  }
  return {
    seed,
    ok: violation === null,
    violation,
    nodes: count,
    events,
    leaderChanges,
    promotionsUndone: [...sim.nodes.values()].reduce((n, node) => n + node.logger.messages('warn').filter((m) => m.startsWith(UNDONE_PROMOTION)).length, 0),
    acknowledgedWrites: sim.network.acknowledgedWrites.length,
    simulatedMs: sim.clock.now() - start,
  };
}

/** Runs `runs` schedules from `firstSeed` on; stops at the first violation unless `keepGoing`. */
export async function runSchedules(firstSeed: number, runs: number, opts: { readonly keepGoing?: boolean; readonly profile?: 'quick' | 'deep' } = {}): Promise<ScheduleResult[]> {
  const out: ScheduleResult[] = [];
  const keepGoing = opts.keepGoing ?? false;
  for (let i = 0; i < runs; i++) {
    const r = await runSchedule(firstSeed + i, { profile: opts.profile ?? 'deep' });
    out.push(r);
    if (!r.ok && !keepGoing) break;
  }
  return out;
}
