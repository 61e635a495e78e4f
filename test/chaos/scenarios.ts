/**
 * The chaos scenarios: each breaks the running cluster in one way while a writer inserts on
 * every node every 20 ms, heals it, waits until the cluster is whole, and judges what was
 * observed (checks.ts). They run one after another on the same cluster.
 */
import { readFile, stat } from 'node:fs/promises';
import pg from 'pg';
import { join } from 'node:path';
import type { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { serverProcessesInDataDir } from '../../src/adapters/database/data-dir-processes.js';
import { FENCE_HOLD_FILE } from '../../src/adapters/database/fence-hold.js';
import { pathExists } from '../../src/adapters/database/path-exists.js';
import { isAlive, waitFor } from '../../scripts/lib/processes.js';
import { addresses, api, etcdLeaderMember, hold, idsOn, settledRowDigests, signal, sql, waitConverged } from './chaos-cluster.js';
import { firstAckElsewhere, lastAckOf, longestWriteGap, longestWriteGapMs, lostAcks, untrustworthyHealthy, writableOverlapMs, type Ack } from './checks.js';
import { FrozenProcesses, freezerAvailable } from '../support/frozen-processes.js';
import { cutHost, healHost, lossyHost, type LabHost } from './lab.js';
import { clusterPrefix } from '../../src/adapters/cluster-store/keys.js';
import { HealthWatch, LeaderKeyWatch, NodeWriter, WRITER_QUERY_TIMEOUT_MS } from './observers.js';

/** Replication mode a scenario runs in: asynchronous, synchronous (one synchronous standby), or quorum (ANY 1 of the replicas). */
export type ChaosMode = 'async' | 'sync' | 'quorum';

/** Everything a scenario needs. */
export interface ChaosContext {
  readonly runner: ClusterRunner;
  /** The etcd members. */
  readonly etcd: readonly LabHost[];
  readonly nodes: readonly LabHost[];
  readonly mode: ChaosMode;
  readonly log: (line: string) => void;
}

/** When the fault began and when it was healed (null: nothing to heal). */
interface FaultTimes {
  readonly faultAt: number;
  readonly healAt: number | null;
}

/** The figures and verdicts of one scenario. */
export interface ScenarioResult {
  readonly name: string;
  readonly mode: ChaosMode;
  /** ms from the fault to the first write acknowledged by another node (null: the primary did not change). */
  readonly failoverMs: number | null;
  /** ms two nodes acknowledged writes at the same time (must be 0). */
  readonly overlapMs: number;
  /** ms from the old primary's last acknowledged write to the moment the leader key left it (positive: it stopped first). */
  readonly lastAckBeforeKeyMovedMs: number | null;
  /** ms from the heal to the old primary streaming from the leader on its timeline. */
  readonly healToStreamingMs: number | null;
  /** Longest time without any acknowledged write on any node during the scenario. */
  readonly writeGapMs: number;
  readonly acked: number;
  readonly lost: number;
  /** Read-only health checks answered 200 by a node that may have held WAL the leader lacked (must be 0). */
  readonly untrustworthyHealthy: number;
  readonly converged: boolean;
  /** What failed the scenario (empty: passed). */
  readonly failures: readonly string[];
  /** Scenario-specific figures, for the table. */
  readonly notes: readonly string[];
}

/** A fault: breaks the cluster whose primary is `primary`, and heals it. */
type Fault = (ctx: ChaosContext, primary: string, observed: Observation) => Promise<FaultOutcome>;

/** What a fault reports: its times, figures of its own, and checks of its own that failed. */
type FaultOutcome = FaultTimes & { readonly notes?: string[]; readonly failures?: string[] };

/** The observers of one scenario. */
interface Observation {
  readonly writers: NodeWriter[];
  readonly health: HealthWatch;
  readonly leader: LeaderKeyWatch;
  acks(): Ack[];
}

let scenarioCount = 0;

/** Waits until a node other than `old` acknowledges a write after `since` (at most `timeoutMs`); its time or null. */
async function newPrimaryWrites(obs: Observation, old: string, since: number, timeoutMs: number): Promise<number | null> {
  try {
    return await waitFor('a new primary to acknowledge a write', timeoutMs, async () => firstAckElsewhere(obs.acks(), old, since)?.at, 50);
  } catch {
    return null;
  }
}

const hostOf = (ctx: ChaosContext, name: string) => ctx.nodes.find((h) => h.name === name)!;

/** The synchronous standby the primary `primary` names on /cluster (waits up to 30 s for one). */
function syncStandbyOf(ctx: ChaosContext, primary: string): Promise<string> {
  return waitFor('a synchronous standby', 30_000, async () => {
    const doc = (await api(ctx.runner, primary, 'GET', '/cluster')).body as { members: { name: string; role: string }[] };
    return doc.members.find((m) => m.role === 'sync_standby')?.name;
  }, 200);
}

/** Runs one scenario end to end. */
async function runScenario(ctx: ChaosContext, name: string, fault: Fault): Promise<ScenarioResult> {
  const { runner } = ctx;
  const nodes = addresses(runner);
  const primary = await waitConverged(runner, 180_000);
  const base = ++scenarioCount * 100_000_000 + (ctx.mode !== 'async' ? 50_000_000 : 0);
  const writers = nodes.map((n, i) => new NodeWriter(n, base + i * 10_000_000));
  const health = new HealthWatch(nodes);
  const leader = new LeaderKeyWatch(ctx.etcd.map((h) => `${h.ip}:${runner.layout.etcdClientPort}`), runner.layout.scope);
  const obs: Observation = { writers, health, leader, acks: () => writers.flatMap((w) => w.acks) };
  ctx.log(`${name} (${ctx.mode}): primary ${primary}`);
  for (const o of [...writers, health, leader]) o.start();
  const started = Date.now();
  let times: FaultOutcome;
  try {
    await hold(3000);
    times = await fault(ctx, primary, obs);
    const leaderNow = await waitConverged(runner, 180_000);
    // The old primary's rejoin is measured to its end: the rows may converge before its health check says streaming.
    const healAt = times.healAt;
    if (healAt !== null && leaderNow !== primary) {
      const tl = () => Math.max(0, ...health.primaryTimelines.map((p) => p.timeline));
      await waitFor(`${primary} streaming again`, 30_000, async () => health.streamingSince(primary, tl(), healAt) ?? undefined, 200).catch(() => undefined);
    }
    await hold(1000);
  } finally {
    for (const w of writers) await w.stop();
  }
  const finalPrimary = await waitConverged(runner, 120_000);
  await health.stop();
  await leader.stop();
  const ended = Date.now();

  const acks = obs.acks();
  const firstElsewhere = firstAckElsewhere(acks, primary, times.faultAt);
  const oldAcksBefore = firstElsewhere ? acks.filter((a) => a.at < firstElsewhere.at) : acks;
  const lastOld = lastAckOf(oldAcksBefore, primary);
  const keyMoved = leader.movedFrom(primary, times.faultAt);
  const maxTl = Math.max(0, ...health.primaryTimelines.map((p) => p.timeline));
  const streamingAt = times.healAt !== null && finalPrimary !== primary ? health.streamingSince(primary, maxTl, times.healAt) : null;
  const present = await idsOn(nodes.find((n) => n.name === finalPrimary)!);
  const lost = lostAcks(acks, present);
  const untrusted = finalPrimary !== primary ? untrustworthyHealthy(health.answers, health.primaryTimelines, { node: primary, since: times.faultAt }) : untrustworthyHealthy(health.answers, health.primaryTimelines);
  const { digests, converged } = await settledRowDigests(runner, 30_000);
  const overlapMs = writableOverlapMs(acks);

  const failures: string[] = [...(times.failures ?? [])];
  if (overlapMs > 0) failures.push(`two nodes acknowledged writes at the same time for ${overlapMs} ms`);
  if (untrusted.length > 0) {
    const first = untrusted[0]!;
    const seen = health.primaryTimelines.filter((p) => p.at < first.sentAt);
    failures.push(`${untrusted.length} read-only health checks passed on a node that may hold WAL the leader lacks (first: ${JSON.stringify(first)}; primaries seen before: ${JSON.stringify(seen)})`);
  }
  if (!converged) failures.push(`the nodes hold different rows: ${JSON.stringify(Object.fromEntries(digests))}`);
  if (ctx.mode !== 'async' && lost.length > 0) failures.push(`${lost.length} acknowledged writes are missing on the final leader ${finalPrimary} (${ctx.mode === 'sync' ? 'synchronous' : 'quorum'} mode)`);
  const healAt = times.healAt;
  const lastAnswers = healAt !== null ? health.answers.filter((a) => a.node === primary && a.at >= healAt).slice(-3) : [];
  const rejoinNote: string[] = [];
  if (healAt !== null && finalPrimary !== primary && streamingAt === null) {
    const api = nodes.find((n) => n.name === primary)!.apiUrl;
    const status = await fetch(`${api}/node`, { signal: AbortSignal.timeout(2000) })
      .then(async (r) => JSON.stringify(await r.json()))
      .catch((e: unknown) => String(e));
    const view = async (url: string) =>
      fetch(`${url}/cluster`, { signal: AbortSignal.timeout(2000) })
        .then(async (r) => JSON.stringify(((await r.json()) as { members?: unknown[] }).members?.map((m) => { const { name, role, state, timeline } = m as Record<string, unknown>; return { name, role, state, timeline }; })))
        .catch((e: unknown) => String(e));
    const leaderApi = nodes.find((n) => n.name === finalPrimary)!.apiUrl;
    rejoinNote.push(`${primary} not seen streaming on timeline ${maxTl} after the heal; last /replica answers: ${JSON.stringify(lastAnswers)}; /node: ${status}; its /cluster: ${await view(api)}; the leader's /cluster: ${await view(leaderApi)}`);
  }
  const result: ScenarioResult = {
    name,
    mode: ctx.mode,
    failoverMs: firstElsewhere && finalPrimary !== primary ? firstElsewhere.at - times.faultAt : null,
    overlapMs,
    lastAckBeforeKeyMovedMs: keyMoved !== null && lastOld !== null && firstElsewhere ? keyMoved - lastOld.at : null,
    healToStreamingMs: streamingAt !== null && times.healAt !== null ? streamingAt - times.healAt : null,
    writeGapMs: longestWriteGapMs(acks, started, ended),
    acked: acks.length,
    lost: lost.length,
    untrustworthyHealthy: untrusted.length,
    converged,
    failures,
    notes: [...(times.notes ?? []), ...rejoinNote],
  };
  ctx.log(`${name} (${ctx.mode}): ${failures.length ? `FAILED: ${failures.join('; ')}` : 'passed'}`);
  return result;
}

// ------------------------------------------------------------------ the faults

/**
 * kill -9 of the primary's agent; its PostgreSQL and fencer stay. The fencer must leave the old
 * primary's data held read-only (standby.signal, with its marker) until the agent is back. The
 * agent is started again once another node writes.
 */
const agentKilled: Fault = async (ctx, primary, obs) => {
  const faultAt = Date.now();
  signal(ctx.runner.agentPid(primary), 'SIGKILL');
  await newPrimaryWrites(obs, primary, faultAt, 60_000);
  await hold(2000);
  const dataDir = join(ctx.runner.layout.dir, primary, 'data');
  const present = (f: string) => pathExists(join(dataDir, f));
  const failures: string[] = [];
  if (!(await present('standby.signal')) || !(await present(FENCE_HOLD_FILE))) failures.push(`the fencer left no read-only hold on ${primary}'s data (standby.signal and ${FENCE_HOLD_FILE})`);
  const healAt = Date.now();
  ctx.runner.startAgent(primary);
  return { faultAt, healAt, failures };
};

/** The PID of the WAL receiver among the server processes of `node`'s data directory (null: none runs). */
async function walReceiverOf(ctx: ChaosContext, node: string): Promise<number | null> {
  for (const pid of await serverProcessesInDataDir(join(ctx.runner.layout.dir, node, 'data'))) {
    const title = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (title.includes('walreceiver')) return pid;
  }
  return null;
}

/** Sets synchronous_mode (null: off) and waits until `role` shows on `count` members of /cluster. */
async function setSyncMode(ctx: ChaosContext, primary: string, mode: true | 'quorum' | null, role: string, count: number): Promise<void> {
  await api(ctx.runner, primary, 'PATCH', '/config', { synchronous_mode: mode });
  await waitFor(`${count} members with role ${role}`, 60_000, async () => {
    const doc = (await api(ctx.runner, primary, 'GET', '/cluster')).body as { members: { role: string }[] };
    return doc.members.filter((m) => m.role === role).length >= count ? true : undefined;
  }, 300);
}

/**
 * Quorum mode (ANY 1 of the two replicas): one replica's WAL receiver is stopped (SIGSTOP), so
 * only the other acknowledges the commits that follow; 400 ms later the primary's agent is
 * killed (-9) and its fencer stops PostgreSQL and releases the key; the receiver resumes 2 s
 * later. The stalled replica must not win the race on the other's status published a loop
 * ago: every commit acknowledged is on the new primary.
 */
const stalledReplicaThenAgentKilled: Fault = async (ctx, primary, obs) => {
  if (ctx.mode !== 'quorum') {
    await setSyncMode(ctx, primary, 'quorum', 'quorum_standby', 2);
    await hold(2000);
  }
  const replicas = ctx.nodes.filter((h) => h.name !== primary).map((h) => h.name);
  const stalled = replicas[Math.floor(Math.random() * replicas.length)]!;
  const receiver = await walReceiverOf(ctx, stalled);
  if (receiver === null) return { faultAt: Date.now(), healAt: null, failures: [`${stalled} runs no WAL receiver`] };
  const faultAt = Date.now();
  signal(receiver, 'SIGSTOP');
  try {
    await hold(400);
    signal(ctx.runner.agentPid(primary), 'SIGKILL');
    // The race is over within moments; a stalled replica that won could not finish its promotion (the startup process waits for its WAL receiver to exit).
    await hold(2000);
  } finally {
    signal(receiver, 'SIGCONT');
  }
  const healAt = Date.now();
  const newPrimaryAt = await newPrimaryWrites(obs, primary, faultAt, 60_000);
  const failures: string[] = [];
  const winner = newPrimaryAt === null ? null : firstAckElsewhere(obs.acks(), primary, faultAt)!.node;
  if (winner !== null) {
    const present = await idsOn(addresses(ctx.runner).find((n) => n.name === winner)!);
    const lost = lostAcks(obs.acks().filter((a) => a.node === primary), present);
    if (lost.length) failures.push(`${lost.length} writes acknowledged in quorum mode are missing on the new primary ${winner} (the stalled replica was ${stalled})`);
  } else failures.push('no new primary within 60 s');
  ctx.runner.startAgent(primary);
  const leaderNow = await waitConverged(ctx.runner, 180_000);
  if (ctx.mode !== 'quorum') await setSyncMode(ctx, leaderNow, ctx.mode === 'sync' ? true : null, ctx.mode === 'sync' ? 'sync_standby' : 'replica', ctx.mode === 'sync' ? 1 : 2);
  return { faultAt, healAt, failures, notes: [`${stalled}'s WAL receiver stopped 400 ms before the agent was killed; new primary ${winner ?? 'none'}`] };
};

/** kill -9 of the primary's agent and postmaster together; the fencer stays. */
const agentAndPostmasterKilled: Fault = async (ctx, primary, obs) => {
  const faultAt = Date.now();
  signal(ctx.runner.agentPid(primary), 'SIGKILL');
  signal(ctx.runner.postmasterPid(primary), 'SIGKILL');
  await newPrimaryWrites(obs, primary, faultAt, 60_000);
  await hold(2000);
  const healAt = Date.now();
  ctx.runner.startAgent(primary);
  return { faultAt, healAt };
};

/** Waits (polling every few ms) until `path` gains a line containing `needle` past byte `from`; the time, or null after `timeoutMs`. */
async function waitForLogLine(path: string, from: number, needle: string, timeoutMs: number): Promise<number | null> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    const text = await readFile(path).then((b) => b.subarray(from).toString('utf8'), () => '');
    if (text.includes(needle)) return Date.now();
    await new Promise((r) => setTimeout(r, 3));
  }
  return null;
}

/** The messages `node`'s fencer logged since `since` (its JSON lines' `msg`). */
async function fencerLinesSince(ctx: ChaosContext, node: string, since: number): Promise<string[]> {
  const text = await readFile(join(ctx.runner.layout.dir, node, 'fencer.log'), 'utf8').catch(() => '');
  const out: string[] = [];
  for (const line of text.split('\n')) {
    try {
      const entry = JSON.parse(line) as { time?: string; msg?: string };
      if (entry.time !== undefined && Date.parse(entry.time) >= since && typeof entry.msg === 'string') out.push(entry.msg);
    } catch {
      // not a log line
    }
  }
  return out;
}

/** Waits until none of `pids` runs (at most `timeoutMs`); the time, or null. */
async function allGone(pids: readonly number[], timeoutMs: number): Promise<number | null> {
  return waitFor('the old server processes to exit', timeoutMs, async () => (pids.some((p) => isAlive(p)) ? undefined : Date.now()), 20).catch(() => null);
}

/** The first write any node acknowledged at or after `since` (waits up to `timeoutMs`), or null. */
async function writeAfter(obs: Observation, since: number, timeoutMs: number): Promise<Ack | null> {
  return waitFor('a write', timeoutMs, async () => obs.acks().find((a) => a.at >= since), 20).catch(() => null);
}

/**
 * kill -9 of the primary's postmaster while its agent runs on (PostgreSQL crashed, the host
 * did not): its other processes exit as they notice, the agent starts the server again on the
 * key it holds (crash recovery) or another node takes over; either way writes resume within a
 * minute, with no acknowledged commit lost in synchronous mode.
 */
const postmasterKilled: Fault = async (ctx, primary, obs) => {
  const pids = await serverProcessesInDataDir(join(ctx.runner.layout.dir, primary, 'data'));
  const faultAt = Date.now();
  signal(ctx.runner.postmasterPid(primary), 'SIGKILL');
  const goneAt = await allGone(pids, 30_000);
  const failures: string[] = [];
  if (goneAt === null) failures.push(`processes of the killed server still ran 30 s later: ${pids.filter((p) => isAlive(p)).join(', ')}`);
  const next = goneAt === null ? null : await writeAfter(obs, goneAt, 60_000);
  if (goneAt !== null && next === null) failures.push('no node acknowledged a write within 60 s of the crash');
  const where = next === null ? '' : `; writes again ${next.at - faultAt} ms after the kill, on ${next.node === primary ? 'the same node (restarted)' : `${next.node} (failed over)`}`;
  return { faultAt, healAt: null, failures, notes: [`old server processes gone ${goneAt === null ? 'never' : `${goneAt - faultAt} ms`} after the kill${where}`] };
};

/**
 * kill -9 of one client backend of the primary: PostgreSQL ends every session and recovers by
 * itself (restart_after_crash). The agent must leave that to the postmaster: no failover, no
 * second start, writes back on the same node within seconds.
 */
const backendKilled: Fault = async (ctx, primary, obs) => {
  const dataDir = join(ctx.runner.layout.dir, primary, 'data');
  let victim: number | null = null;
  for (const pid of await serverProcessesInDataDir(dataDir)) {
    const title = (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replace(/\0/g, ' ');
    if (/\(\d+\)/.test(title) && !title.includes('walsender')) {
      victim = pid;
      break;
    }
  }
  if (victim === null) return { faultAt: Date.now(), healAt: null, failures: [`${primary} runs no client backend`] };
  const postmaster = ctx.runner.postmasterPid(primary);
  const faultAt = Date.now();
  signal(victim, 'SIGKILL');
  await hold(500);
  const next = await writeAfter(obs, Date.now(), 30_000);
  await hold(Number(ctx.runner.layout.dcs['loop_wait']) * 2000);
  const failures: string[] = [];
  if (next === null) failures.push('no write within 30 s of the crash');
  else if (next.node !== primary) failures.push(`writes resumed on ${next.node}: a failover for a crash PostgreSQL recovers from by itself`);
  if (obs.leader.movedFrom(primary, faultAt) !== null) failures.push('the leader key left the primary');
  if (postmaster !== undefined && ctx.runner.postmasterPid(primary) !== postmaster) failures.push(`the postmaster was replaced (${postmaster} -> ${ctx.runner.postmasterPid(primary)}): the agent restarted a server that recovered by itself`);
  const gap = next === null ? null : longestWriteGap(obs.acks(), faultAt, next.at);
  return { faultAt, healAt: null, failures, notes: [`killed backend ${victim}; longest write gap after the kill ${gap === null ? 'unbounded' : `${gap.ms} ms`}`] };
};

/**
 * Every connection slot of the primary that an ordinary role may take is taken (a connection
 * storm from an application, `too many clients already` for the next one) for 30 s, then
 * released; meanwhile the agent's own session is ended, so it must connect again while only the
 * superusers' reserved slots are left. The agent's work goes on: no failover, no restart of the
 * postmaster, `/primary` answers 200 throughout, the writers (superusers on connections they
 * already hold) go on writing.
 */
const connectionsExhausted: Fault = async (ctx, primary, obs) => {
  const node = addresses(ctx.runner).find((n) => n.name === primary)!;
  const postmaster = ctx.runner.postmasterPid(primary);
  const held: pg.Client[] = [];
  let refusal = '';
  const faultAt = Date.now();
  const failures: string[] = [];
  const answers: number[] = [];
  let agentSessionsCut = 0;
  try {
    for (let i = 0; i < 1000; i++) {
      // The lab's rewind role: no superuser, and the only such role its pg_hba.conf lets in from the clients' side.
      const c = new pg.Client({ host: node.host, port: node.pgPort, user: 'rewinder', password: 'warden-demo-rw', database: 'postgres', connectionTimeoutMillis: 2000 });
      c.on('error', () => undefined);
      try {
        await c.connect();
        held.push(c);
      } catch (e) {
        refusal = String((e as Error).message ?? e);
        break;
      }
    }
    // The agent's own session is cut too: it must get a new one while only the superusers' reserved slots are left.
    const cut = await sql(node, "SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE application_name = 'warden'").then((r) => Number(r.rows[0]?.n ?? 0), (e: unknown) => { failures.push(`could not end the agent's session: ${String(e)}`); return 0; });
    agentSessionsCut = cut;
    const until = Date.now() + 30_000;
    while (Date.now() < until) {
      const r = await fetch(`${node.apiUrl}/primary`, { signal: AbortSignal.timeout(2000) }).then((x) => x.status, () => 0);
      answers.push(r);
      await hold(500);
    }
  } finally {
    for (const c of held) await c.end().catch(() => undefined);
  }
  const healAt = Date.now();
  await hold(Number(ctx.runner.layout.dcs['loop_wait']) * 2000);
  if (!/too many clients|reserved/.test(refusal)) failures.push(`the storm was not refused for want of slots after ${held.length} connections: ${refusal || 'never refused'}`);
  if (firstAckElsewhere(obs.acks(), primary, faultAt) !== null || obs.leader.movedFrom(primary, faultAt) !== null) failures.push('the leader changed while the primary had no free connection slot');
  if (postmaster !== undefined && ctx.runner.postmasterPid(primary) !== postmaster) failures.push(`the postmaster was replaced (${postmaster} -> ${ctx.runner.postmasterPid(primary)})`);
  const bad = answers.filter((a) => a !== 200);
  if (bad.length > 0) failures.push(`/primary on the primary answered ${bad.join(', ')} during the storm (of ${answers.length})`);
  const gap = longestWriteGap(obs.acks().filter((a) => a.node === primary), faultAt, healAt);
  const stopped = primaryStopped(obs, primary, gap, 1000);
  if (stopped) failures.push(`${stopped} during the storm`);
  if (agentSessionsCut === 0) failures.push("the agent had no session to cut (application_name 'warden')");
  return { faultAt, healAt, failures, notes: [`${held.length} connections held for 30 s (the next refused: ${refusal.slice(0, 80)}); the agent's ${agentSessionsCut} session(s) ended meanwhile; /primary ${answers.filter((a) => a === 200).length} of ${answers.length} times 200; longest write gap ${gap.ms} ms`] };
};

/** The primary's PostgreSQL processes made silent by a fault; `release` ends the fault. */
interface Silenced {
  /** Figures taken just before the release. */
  readonly observe: () => Promise<string>;
  readonly release: () => Promise<void>;
}

/**
 * The primary's PostgreSQL silenced while its agent runs on, with primary_start_timeout 10 s:
 * the agent stops the server (a kill) and only then gives the key up. The processes are let
 * go once another node writes: nothing of the old server may answer a write then. `silence`
 * returns null when this machine cannot make the fault (the scenario is skipped).
 */
async function silencedPrimary(ctx: ChaosContext, primary: string, obs: Observation, silence: (pids: number[], faultAt: number) => Promise<Silenced | null>): Promise<FaultOutcome> {
  await api(ctx.runner, primary, 'PATCH', '/config', { primary_start_timeout: 10 });
  await hold(2 * Number(ctx.runner.layout.dcs['loop_wait']) * 1000);
  const dataDir = join(ctx.runner.layout.dir, primary, 'data');
  const pids = await serverProcessesInDataDir(dataDir);
  const faultAt = Date.now();
  const silenced = await silence(pids, faultAt);
  if (!silenced) {
    await api(ctx.runner, primary, 'PATCH', '/config', { primary_start_timeout: null });
    return { faultAt, healAt: null, notes: ['skipped: this machine cannot make the fault'] };
  }
  let newWriteAt: number | null = null;
  let seen = '';
  try {
    newWriteAt = await newPrimaryWrites(obs, primary, faultAt, 90_000);
    await hold(2000);
    seen = await silenced.observe();
  } finally {
    await silenced.release();
  }
  const healAt = Date.now();
  const left = (await serverProcessesInDataDir(dataDir)).filter((p) => pids.includes(p));
  const failures: string[] = [];
  if (newWriteAt === null) failures.push('no other node wrote within 90 s of the fault');
  if (left.length > 0) failures.push(`${left.length} processes of the old server outlived the failover`);
  const p = await waitConverged(ctx.runner, 120_000);
  await api(ctx.runner, p, 'PATCH', '/config', { primary_start_timeout: null });
  return { faultAt, healAt, failures, notes: [`${seen}; another node wrote ${newWriteAt === null ? 'never' : `${newWriteAt - faultAt} ms`} after the fault (primary_start_timeout 10 s)`] };
}

/** SIGSTOP of every process of the primary's PostgreSQL (a server hung on I/O looks the same to the agent). */
const postgresFrozen: Fault = (ctx, primary, obs) =>
  silencedPrimary(ctx, primary, obs, async (pids) => {
    for (const pid of pids) signal(pid, 'SIGSTOP');
    return {
      observe: async () => `froze ${pids.length} processes`,
      release: async () => {
        for (const pid of pids) signal(pid, 'SIGCONT');
      },
    };
  });

/**
 * Every process of the primary's PostgreSQL stuck in the kernel (state D, as on a hung disk or
 * mount; made with the cgroup v1 freezer). SIGKILL does not end such a process at once, but it
 * can run nothing more: once the agent killed them the key goes; released, they die at once.
 */
const postgresStuckInIo: Fault = (ctx, primary, obs) =>
  silencedPrimary(ctx, primary, obs, async (pids, faultAt) => {
    if (!(await freezerAvailable())) return null;
    const stuck = await FrozenProcesses.freeze(`warden-chaos-${process.pid}-${faultAt}`, pids).catch(() => null);
    if (!stuck || !(await stuck.allStuck())) {
      await stuck?.release();
      return null;
    }
    return {
      observe: async () => `${pids.length} processes stuck, ${(await stuck.killPending()).length} of them with SIGKILL pending`,
      release: () => stuck.release(),
    };
  });

/**
 * SIGSTOP of every process of a replica's PostgreSQL for 30 s (in synchronous mode, the
 * synchronous standby's) while its agent runs on. The primary stays; in synchronous mode its
 * commits wait for the frozen standby until its agent reports the server silent and the
 * primary names another standby (not for wal_sender_timeout, 60 s); asynchronous writes do not
 * wait at all.
 */
const standbyFrozen: Fault = async (ctx, primary, obs) => {
  let victim = ctx.nodes.find((h) => h.name !== primary)!.name;
  if (ctx.mode === 'sync') {
    victim = await syncStandbyOf(ctx, primary);
  }
  const frozen = await serverProcessesInDataDir(join(ctx.runner.layout.dir, victim, 'data'));
  const faultAt = Date.now();
  for (const pid of frozen) signal(pid, 'SIGSTOP');
  try {
    await hold(30_000);
  } finally {
    for (const pid of frozen) signal(pid, 'SIGCONT');
  }
  const healAt = Date.now();
  const longest = longestWriteGap(obs.acks().filter((a) => a.node === primary), faultAt, healAt);
  const failures: string[] = [];
  if (firstAckElsewhere(obs.acks(), primary, faultAt) !== null) failures.push('the primary changed while a replica was frozen');
  if (ctx.mode === 'sync') {
    // Its commits wait for the frozen standby until another is named.
    if (longest.ms > 15_000) failures.push(`the primary's writes stopped for ${longest.ms} ms while ${victim}'s PostgreSQL was frozen (bound 15000 ms)`);
  } else {
    // Quorum mode: the other replica acknowledges, nothing waits; asynchronous commits never wait.
    const stopped = primaryStopped(obs, primary, longest, 1000);
    if (stopped) failures.push(`${stopped} while ${victim}'s PostgreSQL was frozen`);
  }
  return { faultAt, healAt, failures, notes: [`froze ${victim} (${frozen.length} processes) for 30 s; the primary's longest write gap ${longest.ms} ms`] };
};

/**
 * The primary's links to etcd and the other nodes lose 30% of their packets for 40 s (TCP
 * retransmits: calls that take seconds, a stream that stalls), clients still reach it. The
 * agent may keep its lock or lose it: either way never two writable primaries, nothing
 * acknowledged lost in synchronous and quorum mode, and writes on some node within a minute
 * of the heal.
 */
const primaryLossy: Fault = async (ctx, primary, obs) => {
  const host = hostOf(ctx, primary);
  const faultAt = Date.now();
  await lossyHost(host, [...ctx.etcd, ...ctx.nodes.filter((h) => h !== host)], 0.3);
  try {
    await hold(40_000);
  } finally {
    await healHost(host);
  }
  const healAt = Date.now();
  const during = longestWriteGap(obs.acks(), faultAt, healAt);
  const next = await writeAfter(obs, healAt, 60_000);
  const failures: string[] = [];
  if (next === null) failures.push('no node acknowledged a write within 60 s of the heal');
  const moved = firstAckElsewhere(obs.acks(), primary, faultAt);
  return {
    faultAt,
    healAt,
    failures,
    notes: [`30% packet loss for 40 s; longest write gap during it ${during.ms} ms; ${moved ? `${moved.node} took over ${moved.at - faultAt} ms after the fault` : 'the primary stayed'}`],
  };
};

/**
 * A replica (in synchronous mode, the synchronous standby) loses etcd and the other nodes for
 * 40 s (clients still reach it). The primary stays; in synchronous mode its commits wait for
 * the cut-off standby until the primary names another one (its position stood still for 5 s).
 */
const standbyPartitioned: Fault = async (ctx, primary, obs) => {
  const victim = ctx.mode === 'sync' ? await syncStandbyOf(ctx, primary) : ctx.nodes.find((h) => h.name !== primary)!.name;
  const host = hostOf(ctx, victim);
  const faultAt = Date.now();
  await cutHost(host, [...ctx.etcd, ...ctx.nodes.filter((h) => h !== host)]);
  try {
    await hold(40_000);
  } finally {
    await healHost(host);
  }
  const healAt = Date.now();
  const gap = longestWriteGapMs(obs.acks().filter((a) => a.node === primary), faultAt, healAt);
  const failures: string[] = [];
  if (firstAckElsewhere(obs.acks(), primary, faultAt) !== null) failures.push('the primary changed while a replica was cut off');
  // Synchronous: the primary names another standby once the cut-off one's position stood still for 5 s, long before ttl.
  const bound = ctx.mode === 'sync' ? 15_000 : 1_000;
  if (gap > bound) failures.push(`the primary's writes stopped for ${gap} ms while ${victim} was cut off (bound ${bound} ms)`);
  return { faultAt, healAt, failures, notes: [`cut ${victim} off for 40 s; the primary's longest write gap ${gap} ms`] };
};

/**
 * A replica (in synchronous mode the synchronous standby) loses the other nodes but not etcd:
 * it streams nothing and answers no peer while its member key stays fresh, so it still races.
 * 15 s later the primary's agent and postmaster are killed. The other replica must take over
 * within ttl + 10 s; in synchronous and quorum mode the cut-off one, which lacks the last
 * commits (the primary went on without it), must not.
 */
const standbyCutFromNodesThenPrimaryLost: Fault = async (ctx, primary, obs) => {
  const victim = ctx.mode === 'sync' ? await syncStandbyOf(ctx, primary) : ctx.nodes.find((h) => h.name !== primary)!.name;
  const host = hostOf(ctx, victim);
  const faultAt = Date.now();
  await cutHost(host, ctx.nodes.filter((h) => h !== host));
  const failures: string[] = [];
  let next: Ack | null = null;
  let killAt = 0;
  try {
    await hold(15_000);
    const gap = longestWriteGapMs(obs.acks().filter((a) => a.node === primary), faultAt, Date.now());
    killAt = Date.now();
    signal(ctx.runner.agentPid(primary), 'SIGKILL');
    signal(ctx.runner.postmasterPid(primary), 'SIGKILL');
    const ttlMs = Number(ctx.runner.layout.dcs['ttl']) * 1000;
    next = await waitFor('a new primary to acknowledge a write', ttlMs + 10_000, async () => obs.acks().find((a) => a.node !== primary && a.at >= killAt), 20).catch(() => null);
    if (next === null) failures.push(`no other node acknowledged a write within ttl + 10 s of the primary's loss`);
    else if (next.node === victim && ctx.mode !== 'async') failures.push(`${victim}, cut off from the primary and behind it, took over`);
    const bound = ctx.mode === 'async' ? 1_000 : 15_000;
    if (gap > bound) failures.push(`the primary's writes stopped for ${gap} ms while ${victim} was cut off (bound ${bound} ms)`);
    await hold(2000);
  } finally {
    await healHost(host);
  }
  const healAt = Date.now();
  ctx.runner.startAgent(primary);
  return { faultAt, healAt, failures, notes: [`cut ${victim} from the other nodes; primary ${primary} lost 15 s later; ${next === null ? 'no new primary' : `${next.node} wrote ${next.at - killAt} ms after the loss`}`] };
};

/** SIGSTOP of `pid` for `ms`, SIGCONT whatever happens. */
async function frozenFor(pid: number | undefined, ms: number): Promise<void> {
  signal(pid, 'SIGSTOP');
  try {
    await hold(ms);
  } finally {
    signal(pid, 'SIGCONT');
  }
}

/** SIGSTOP of the primary's agent for 40 s while its PostgreSQL runs on. */
const agentFrozen: Fault = async (ctx, primary) => {
  const pid = ctx.runner.agentPid(primary);
  const faultAt = Date.now();
  await frozenFor(pid, 40_000);
  return { faultAt, healAt: Date.now() };
};

/** POSTs `body` to etcd's JSON gateway at `path`, on the first member that answers. */
async function etcdGateway(ctx: ChaosContext, path: string, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  let last: unknown = null;
  for (const m of ctx.etcd) {
    try {
      const r = await fetch(`http://${m.ip}:${ctx.runner.layout.etcdClientPort}${path}`, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(2000) });
      const doc = (await r.json()) as Record<string, unknown>;
      if (r.ok) return doc;
      last = new Error(`${path} answered ${r.status}: ${JSON.stringify(doc)}`);
    } catch (e) {
      last = e;
    }
  }
  throw last instanceof Error ? last : new Error(`no etcd member answered ${path}`);
}

/**
 * Revokes, as `etcdctl lease revoke` does, the lease of the leader key (`which` 'leader'), or
 * every lease (`which` 'every', what an etcd raft leader that resumed after a freeze longer than
 * the TTLs does, etcd issue 15247). Returns the leases revoked.
 */
async function revokeLeases(ctx: ChaosContext, which: 'leader' | 'every'): Promise<string[]> {
  let ids: string[];
  if (which === 'leader') {
    const key = Buffer.from(`${clusterPrefix('/service', ctx.runner.layout.scope)}leader`).toString('base64');
    const doc = (await etcdGateway(ctx, '/v3/kv/range', { key })) as { kvs?: { lease?: string }[] };
    ids = (doc.kvs ?? []).map((kv) => kv.lease ?? '0').filter((id) => id !== '0');
  } else {
    const doc = (await etcdGateway(ctx, '/v3/lease/leases', {})) as { leases?: { ID: string }[] };
    ids = (doc.leases ?? []).map((l) => l.ID);
  }
  for (const ID of ids) await etcdGateway(ctx, '/v3/lease/revoke', { ID });
  return ids;
}

/**
 * The leader key's lease is revoked while every agent runs (an operator's `etcdctl lease
 * revoke`): the leader key and the primary's member key vanish together, its server still
 * writable. The others must not promote while it answers as a primary: it takes its key back,
 * no failover, no second writable primary.
 */
const leaderLeaseRevoked: Fault = async (ctx, primary, obs) => {
  const faultAt = Date.now();
  const ids = await revokeLeases(ctx, 'leader');
  await hold(8000);
  const healAt = Date.now();
  const failures: string[] = [];
  if (ids.length === 0) failures.push('the leader key had no lease to revoke');
  // The key leaves the primary with its lease; it must come back to it, and no other node may take writes meanwhile.
  const holders = obs.leader.changes.filter((c) => c.at >= faultAt).map((c) => c.leader ?? '(none)');
  const holder = obs.leader.changes.at(-1)?.leader ?? null;
  const elsewhere = firstAckElsewhere(obs.acks(), primary, faultAt);
  if (elsewhere !== null) failures.push(`${elsewhere.node} acknowledged a write after the primary's lease was revoked while it ran`);
  if (holder !== primary) failures.push(`the leader key names ${holder ?? 'nobody'} at the end, not the primary ${primary}`);
  const longest = longestWriteGap(obs.acks().filter((a) => a.node === primary), faultAt, healAt);
  return { faultAt, healAt, failures, notes: [`revoked lease ${ids.join(', ')} of the leader key; the key then named ${holders.join(' -> ') || 'no change seen'}; ${primary}'s longest write gap ${longest.ms} ms`] };
};

/**
 * The primary's agent is frozen (SIGSTOP) and then every lease is revoked at once, as an etcd
 * raft leader that resumes after a freeze longer than the TTLs does: the leader key goes while
 * nothing on that node can answer the others or step down. Its fencer, watching the key, must
 * stop PostgreSQL before another node promotes; the agent is thawed once another node writes.
 */
const leasesRevokedAgentFrozen: Fault = async (ctx, primary, obs) => {
  const pid = ctx.runner.agentPid(primary);
  signal(pid, 'SIGSTOP');
  let ids: string[] = [];
  let faultAt = Date.now();
  let next: number | null = null;
  try {
    // The agent's last renewal must not be older than the freeze: the fencer's deadline alone would stop it later.
    await hold(500);
    faultAt = Date.now();
    ids = await revokeLeases(ctx, 'every');
    next = await newPrimaryWrites(obs, primary, faultAt, 60_000);
    await hold(3000);
  } finally {
    signal(pid, 'SIGCONT');
  }
  const healAt = Date.now();
  const fenced = (await fencerLinesSince(ctx, primary, faultAt)).find((l) => l.includes('while the agent holds its lock'));
  const lastOld = lastAckOf(obs.acks(), primary);
  const failures: string[] = [];
  if (!fenced) failures.push(`${primary}'s fencer did not stop its server for the lost key`);
  if (next === null) failures.push('no other node acknowledged a write within 60 s');
  const notes = [
    `froze ${primary}'s agent, revoked ${ids.length} leases; ${primary}'s last write ${lastOld === null ? 'none' : `${lastOld.at - faultAt} ms`} and another node's first ${next === null ? 'never' : `${next - faultAt} ms`} after the revoke`,
  ];
  return { faultAt, healAt, failures, notes };
};

/** The primary loses etcd and the other nodes (clients still reach it) until another node writes, plus a few seconds. */
const primaryPartitioned: Fault = async (ctx, primary, obs) => {
  const host = hostOf(ctx, primary);
  const faultAt = Date.now();
  await cutHost(host, [...ctx.etcd, ...ctx.nodes.filter((h) => h !== host)]);
  try {
    await newPrimaryWrites(obs, primary, faultAt, 60_000);
    await hold(5000);
  } finally {
    await healHost(host);
  }
  return { faultAt, healAt: Date.now() };
};

/** The primary loses etcd only (it still reaches the other nodes). */
const primaryCutFromEtcd: Fault = async (ctx, primary, obs) => {
  const host = hostOf(ctx, primary);
  const faultAt = Date.now();
  await cutHost(host, ctx.etcd);
  try {
    await newPrimaryWrites(obs, primary, faultAt, 60_000);
    await hold(5000);
  } finally {
    await healHost(host);
  }
  return { faultAt, healAt: Date.now() };
};

/** What the writers' clients were told during a write gap (errors, reconnects), for a failure message: the gap's cause seen from the client. */
function writerFailuresIn(obs: Observation, gap: { readonly start: number; readonly end: number }): string {
  const seen = obs.writers.flatMap((w) => w.failures).filter((f) => !f.readOnly && f.at >= gap.start && f.at <= gap.end);
  if (!seen.length) return ' (no client error meanwhile: the writes were slow, not refused)';
  return ` (the clients were told: ${seen.slice(0, 6).map((f) => `${f.node} +${f.at - gap.start} ms ${f.message}`).join('; ')})`;
}

/**
 * Whether a write gap of a primary that should have written on was the cluster's doing: its
 * clients were refused meanwhile (an error, a read-only refusal), or it lasted longer than the
 * writers' query timeout (which would have ended a waiting commit with an error). A shorter
 * gap without any refusal is a commit that took long on a busy machine (its disk, its
 * scheduler), not a stop: nothing in the agent slows an asynchronous commit without refusing it.
 */
function primaryStopped(obs: Observation, node: string, gap: { readonly ms: number; readonly start: number; readonly end: number }, boundMs: number): string | null {
  if (gap.ms <= boundMs) return null;
  const told = obs.writers.flatMap((w) => w.failures).filter((f) => f.node === node && f.at >= gap.start && f.at <= gap.end);
  if (told.length === 0 && gap.ms <= WRITER_QUERY_TIMEOUT_MS) return null;
  const why = told.length ? ` (its clients were told: ${told.slice(0, 6).map((f) => `+${f.at - gap.start} ms ${f.message}`).join('; ')})` : ' (no client error: longer than a commit may wait)';
  return `${node}'s writes stopped for ${gap.ms} ms from ${new Date(gap.start).toISOString().slice(11, 23)}${why}`;
}

/** The product's default timings, which leave the fencer less room per failsafe round than the suite's. */
const DEFAULT_TIMINGS = { ttl: 30, loop_wait: 10, retry_timeout: 10 } as const;

/**
 * etcd loses its quorum for 30 s (more than ttl; with `timings`, ttl + 15 s): every member
 * stopped, or two of three, or every node cut from etcd (its packets dropped: calls time out
 * instead of being refused, and watch streams look alive until they time out). Without failsafe
 * the primary must stop writing within ttl; with it, it keeps writing. `timings` runs the
 * cluster with other dynamic timings meanwhile.
 */
const etcdQuorumLost = (stopped: 'all' | 'two' | 'cut', failsafe: boolean, timings?: { readonly ttl: number; readonly loop_wait: number; readonly retry_timeout: number }): Fault => async (ctx, primary, obs) => {
  if (failsafe || timings) {
    await api(ctx.runner, primary, 'PATCH', '/config', { ...(failsafe ? { failsafe_mode: true } : {}), ...(timings ?? {}) });
    // The leader publishes the failsafe members with its next loops (and the new timings apply from the next ones).
    await hold(timings ? 3 * timings.loop_wait * 1000 : 6000);
  }
  const victims = stopped === 'cut' ? [] : stopped === 'all' ? ctx.etcd : ctx.etcd.slice(0, 2);
  const faultAt = Date.now();
  for (const m of victims) await ctx.runner.stopEtcdMember(m.name);
  if (stopped === 'cut') for (const h of ctx.nodes) await cutHost(h, ctx.etcd);
  // The outage ends when the first member comes back (with two of three, etcd has its quorum
  // again), not when every member answers: a primary may rightly write again from then on.
  let restartAt = Date.now();
  try {
    await hold(timings ? (timings.ttl + 15) * 1000 : 30_000);
  } finally {
    restartAt = Date.now();
    if (stopped === 'cut') for (const h of ctx.nodes) await healHost(h);
    for (const m of victims) await ctx.runner.startEtcdMember(m.name, false);
    await ctx.runner.startEtcd();
  }
  const healAt = Date.now();
  const ttlMs = (timings?.ttl ?? Number(ctx.runner.layout.dcs['ttl'])) * 1000;
  const during = obs.acks().filter((a) => a.at >= faultAt && a.at < restartAt);
  const lastDuring = lastAckOf(during, primary);
  const wroteFor = lastDuring ? lastDuring.at - faultAt : 0;
  const longest = longestWriteGap(during, faultAt, restartAt);
  const gap = longest.ms;
  const failures: string[] = [];
  if (!failsafe && wroteFor > ttlMs) failures.push(`the primary acknowledged writes ${wroteFor} ms into an etcd outage without failsafe (ttl ${ttlMs} ms)`);
  if (failsafe && gap > 1000) failures.push(`with failsafe the writes stopped for ${gap} ms during the etcd outage${writerFailuresIn(obs, longest)}`);
  const notes = failsafe ? [`longest write gap during the outage ${gap} ms`] : [`primary's last write ${wroteFor} ms into the outage (ttl ${ttlMs} ms)`];
  if (failsafe || timings) {
    const p = await waitConverged(ctx.runner, 120_000);
    const dcs = ctx.runner.layout.dcs;
    await api(ctx.runner, p, 'PATCH', '/config', { ...(failsafe ? { failsafe_mode: null } : {}), ...(timings ? { ttl: dcs['ttl'], loop_wait: dcs['loop_wait'], retry_timeout: dcs['retry_timeout'] } : {}) });
  }
  return { faultAt, healAt, notes, failures };
};

/** The etcd member that leads the raft stops for 30 s: no failover, no write gap over a second. */
const oneEtcdMemberStopped: Fault = async (ctx, primary, obs) => {
  const victim = (await etcdLeaderMember(ctx.runner, ctx.etcd)) ?? ctx.etcd[0]!;
  const faultAt = Date.now();
  await ctx.runner.stopEtcdMember(victim.name);
  try {
    await hold(30_000);
  } finally {
    await ctx.runner.startEtcdMember(victim.name);
  }
  const healAt = Date.now();
  const { longest, failures, stopped } = judgeEtcdMemberFault(obs, primary, faultAt, healAt, 'down');
  const slow = !stopped && longest.ms > 1000 ? ' (slow commits, no client refused)' : '';
  return { faultAt, healAt, notes: [`stopped the raft leader ${victim.name}; longest write gap ${longest.ms} ms, ${longest.start - faultAt} ms after the fault${slow}`], failures };
};

/** One etcd member of three out (`how`): the leader must not change, nor the primary stop writing for a second. */
function judgeEtcdMemberFault(obs: Observation, primary: string, faultAt: number, healAt: number, how: string): { longest: ReturnType<typeof longestWriteGap>; failures: string[]; stopped: string | null } {
  const longest = longestWriteGap(obs.acks().filter((a) => a.node === primary), faultAt, healAt);
  const failures: string[] = [];
  if (firstAckElsewhere(obs.acks(), primary, faultAt) !== null || obs.leader.movedFrom(primary, faultAt) !== null) failures.push(`the leader changed while one etcd member of three was ${how}`);
  const stopped = primaryStopped(obs, primary, longest, 1000);
  if (stopped) failures.push(`${stopped} while one etcd member of three was ${how}`);
  return { longest, failures, stopped };
}

/**
 * The etcd member that leads the raft freezes (SIGSTOP) for 30 s: its connections hang instead of
 * being refused, the other two elect a leader. The agents move to them within their call
 * timeouts: no failover, the primary's writes never stop for a second.
 */
const etcdLeaderFrozen: Fault = async (ctx, primary, obs) => {
  const victim = (await etcdLeaderMember(ctx.runner, ctx.etcd)) ?? ctx.etcd[0]!;
  const pid = ctx.runner.etcdPid(victim.name);
  if (pid === undefined) return { faultAt: Date.now(), healAt: null, failures: [`etcd member ${victim.name} does not run`] };
  const faultAt = Date.now();
  await frozenFor(pid, 30_000);
  const healAt = Date.now();
  const { longest, failures } = judgeEtcdMemberFault(obs, primary, faultAt, healAt, 'frozen');
  return { faultAt, healAt, notes: [`froze the raft leader ${victim.name}; longest write gap ${longest.ms} ms, ${longest.start - faultAt} ms after the fault`], failures };
};

/**
 * The etcd member that leads the raft loses the other two members for 30 s while every client
 * still reaches it: it steps down, the other two elect a leader, and it can no longer serve a
 * consistent read, a lease renewal or a write, nor send its watchers anything new. The agents
 * connected to it must move to the other members: no failover, the primary's writes never stop
 * for a second.
 */
const etcdLeaderIsolated: Fault = async (ctx, primary, obs) => {
  const victim = (await etcdLeaderMember(ctx.runner, ctx.etcd)) ?? ctx.etcd[0]!;
  const faultAt = Date.now();
  await cutHost(victim, ctx.etcd.filter((h) => h !== victim));
  try {
    await hold(30_000);
  } finally {
    await healHost(victim);
  }
  const healAt = Date.now();
  const { longest, failures } = judgeEtcdMemberFault(obs, primary, faultAt, healAt, 'cut off from the other members');
  return { faultAt, healAt, notes: [`cut the raft leader ${victim.name} off from the other members; longest write gap ${longest.ms} ms, ${longest.start - faultAt} ms after the fault`], failures };
};

/** Five switchovers through the API, each to the next node (in synchronous mode, to the synchronous standby; in quorum mode, once it is in the quorum). */
const repeatedSwitchovers: Fault = async (ctx, primary, obs) => {
  const faultAt = Date.now();
  const names = ctx.nodes.map((h) => h.name);
  let current = primary;
  const answered: number[] = [];
  // Per switchover, the request to the candidate's first acknowledged write: an outlier says
  // which switchover and which node, even when the run passes and its logs are removed.
  const writing: string[] = [];
  let firstRequestAt: number | null = null;
  for (let i = 0; i < 5; i++) {
    await waitConverged(ctx.runner, 120_000);
    let candidate = names[(names.indexOf(current) + 1) % names.length]!;
    if (ctx.mode === 'sync') {
      candidate = await syncStandbyOf(ctx, current);
    } else if (ctx.mode === 'quorum') {
      // A new primary names its quorum anew after its promotion: the candidate must be in it again.
      const next = candidate;
      await waitFor(`${next} in the quorum`, 30_000, async () => {
        const doc = (await api(ctx.runner, current, 'GET', '/cluster')).body as { members: { name: string; role: string }[] };
        return doc.members.some((m) => m.name === next && m.role === 'quorum_standby') ? true : undefined;
      }, 200);
    }
    const t0 = Date.now();
    firstRequestAt ??= t0;
    const r = await api(ctx.runner, current, 'POST', '/switchover', { leader: current, candidate });
    if (r.status !== 200) throw new Error(`switchover ${current} -> ${candidate} answered ${r.status}: ${JSON.stringify(r.body)}`);
    answered.push(Date.now() - t0);
    const firstWrite = await waitFor(`a write on ${candidate}`, 30_000, async () => obs.acks().find((a) => a.node === candidate && a.at >= t0)?.at, 20).catch(() => null);
    writing.push(`${current}->${candidate} ${firstWrite === null ? 'none in 30 s' : `${firstWrite - t0} ms`}`);
    current = candidate;
  }
  // What the previous scenario left (a member still rejoining) shows before the first request, not in the switchovers.
  const before = `before the first request: ${firstRequestAt! - faultAt} ms waiting for the cluster to converge, longest write gap ${longestWriteGapMs(obs.acks(), faultAt, firstRequestAt!)} ms`;
  return { faultAt, healAt: null, notes: [`API answered in ${Math.min(...answered)}-${Math.max(...answered)} ms`, `request to a write on the new primary: ${writing.join(', ')}`, before] };
};

/**
 * A switchover whose agent dies or hangs in the middle: kill -9 (`killed`) or SIGSTOP (`frozen`)
 * of the candidate's agent the moment the old primary's server has stopped (plus 0-60 ms: the
 * key is on its way) or the moment it logs its decision to promote (plus 0-20 ms: taking the
 * key, writing the sync key), or of the old primary's agent 0-600 ms after the request (before,
 * during or after its server stops). The cluster must end with one primary without an
 * acknowledged commit lost in synchronous and quorum mode, writing within ttl + 10 s of the
 * fault (the agent stays down or frozen until its lease ran out, ttl + 5 s; a frozen one is then
 * let go on, and must not write on a lock it lost meanwhile), unless the candidate's server
 * promoted (its fencer says so): then only it may hold the last commits, and writes must resume
 * within a minute of its return.
 */
const interruptedSwitchover = (victimRole: 'candidate' | 'old primary', how: 'killed' | 'frozen'): Fault => async (ctx, primary, obs) => {
  const names = ctx.nodes.map((h) => h.name);
  const candidate = ctx.mode === 'sync' ? await syncStandbyOf(ctx, primary) : names[(names.indexOf(primary) + 1) % names.length]!;
  if (ctx.mode === 'quorum') {
    await waitFor(`${candidate} in the quorum`, 30_000, async () => {
      const doc = (await api(ctx.runner, primary, 'GET', '/cluster')).body as { members: { name: string; role: string }[] };
      return doc.members.some((m) => m.name === candidate && m.role === 'quorum_standby') ? true : undefined;
    }, 200);
  }
  const victim = victimRole === 'candidate' ? candidate : primary;
  const victimPid = ctx.runner.agentPid(victim);
  const oldPostmaster = ctx.runner.postmasterPid(primary);
  const candidateLog = join(ctx.runner.layout.dir, 'logs', `${candidate}.log`);
  const logStart = (await stat(candidateLog).catch(() => null))?.size ?? 0;
  const faultAt = Date.now();
  const answer = api(ctx.runner, primary, 'POST', '/switchover', { leader: primary, candidate }).then(
    (r) => `answered ${r.status}`,
    (e: unknown) => `no answer (${String((e as Error)?.message ?? e).slice(0, 60)})`,
  );
  let when: string;
  if (victimRole === 'candidate' && Math.random() < 0.5) {
    // The moment it logs its decision to promote: the kill lands while it takes the key, writes the sync key or promotes.
    const decidedAt = await waitForLogLine(candidateLog, logStart, 'switchover to this node: promoting', 30_000);
    const extra = Math.floor(Math.random() * 20);
    await hold(extra);
    when = decidedAt === null ? 'it never decided to promote' : `${decidedAt - faultAt} ms after the request (it decided to promote) + ${extra} ms`;
  } else if (victimRole === 'candidate') {
    const stoppedAt = await waitFor('the old primary to stop', 30_000, async () => (oldPostmaster === undefined || !isAlive(oldPostmaster) ? Date.now() : undefined), 5).catch(() => null);
    const extra = Math.floor(Math.random() * 60);
    await hold(extra);
    when = stoppedAt === null ? 'the old primary never stopped' : `${stoppedAt - faultAt} ms after the request (its server stopped) + ${extra} ms`;
  } else {
    const delay = Math.floor(Math.random() * 600);
    await hold(delay);
    const stopped = oldPostmaster === undefined || !isAlive(oldPostmaster);
    when = `${delay} ms after the request (its server ${stopped ? 'had stopped' : 'still ran'})`;
  }
  signal(victimPid, how === 'killed' ? 'SIGKILL' : 'SIGSTOP');
  const killedAt = Date.now();
  const ttlMs = Number(ctx.runner.layout.dcs['ttl']) * 1000;
  const next = await writeAfter(obs, killedAt, ttlMs + 10_000);
  // The agent stays down (or frozen) past its lease: what it left (a promotion under way, a held key) plays out under the fencer.
  await hold(Math.max(0, killedAt + ttlMs + 5000 - Date.now()));
  const healAt = Date.now();
  if (how === 'killed') ctx.runner.startAgent(victim);
  else signal(victimPid, 'SIGCONT');
  // A frozen old primary answers the request only once it runs again.
  const said = await answer;
  const failures: string[] = [];
  let waited = '';
  if (next === null) {
    // Only a candidate whose server promoted (commits on it alone, in synchronous mode) may keep the cluster waiting for it.
    const promoted = (await fencerLinesSince(ctx, victim, faultAt)).some((l) => l.includes('its server may have promoted'));
    const after = await writeAfter(obs, healAt, 60_000);
    if (!promoted) failures.push(`no node acknowledged a write within ttl + 10 s of the fault, though ${victim}'s server never promoted`);
    if (after === null) failures.push('no node acknowledged a write within 60 s of the heal');
    waited = `; the cluster waited for ${victim} (its server had promoted), writes ${after === null ? 'never' : `${after.at - healAt} ms`} after its agent was back`;
  }
  const gap = next === null ? null : longestWriteGap(obs.acks(), faultAt, next.at);
  return {
    faultAt,
    healAt,
    failures,
    notes: [`${victimRole} ${victim}'s agent ${how} ${when}; the switchover ${said}; writes resumed on ${next?.node ?? 'none'}, longest gap ${gap === null ? 'unbounded' : `${gap.ms} ms`}${waited}`],
  };
};

/** Every scenario by name, in the order the full suite runs them. */
export const SCENARIOS: Readonly<Record<string, Fault>> = {
  'agent killed': agentKilled,
  'replica stalled, then the agent killed (quorum)': stalledReplicaThenAgentKilled,
  'agent frozen': agentFrozen,
  'primary partitioned': primaryPartitioned,
  'agent and postmaster killed': agentAndPostmasterKilled,
  'primary postmaster killed': postmasterKilled,
  'primary backend killed': backendKilled,
  'primary out of connection slots': connectionsExhausted,
  'primary PostgreSQL frozen': postgresFrozen,
  'primary PostgreSQL stuck in I/O': postgresStuckInIo,
  'standby PostgreSQL frozen': standbyFrozen,
  'standby partitioned': standbyPartitioned,
  'standby cut from the nodes, then the primary lost': standbyCutFromNodesThenPrimaryLost,
  'primary cut from etcd': primaryCutFromEtcd,
  'primary links lossy': primaryLossy,
  'one etcd member stopped': oneEtcdMemberStopped,
  'etcd raft leader frozen': etcdLeaderFrozen,
  'etcd raft leader isolated': etcdLeaderIsolated,
  'leader lease revoked': leaderLeaseRevoked,
  'every lease revoked, primary agent frozen': leasesRevokedAgentFrozen,
  'two etcd members stopped, failsafe off': etcdQuorumLost('two', false),
  'two etcd members stopped, failsafe on': etcdQuorumLost('two', true),
  'etcd stopped, failsafe off': etcdQuorumLost('all', false),
  'etcd stopped, failsafe on': etcdQuorumLost('all', true),
  'etcd cut off, failsafe on, default timings': etcdQuorumLost('cut', true, DEFAULT_TIMINGS),
  'repeated switchovers': repeatedSwitchovers,
  'switchover, candidate killed': interruptedSwitchover('candidate', 'killed'),
  'switchover, old primary killed': interruptedSwitchover('old primary', 'killed'),
  'switchover, candidate frozen': interruptedSwitchover('candidate', 'frozen'),
  'switchover, old primary frozen': interruptedSwitchover('old primary', 'frozen'),
};

/** Scenarios repeated in synchronous mode (none may lose an acknowledged write). */
export const SYNC_SCENARIOS = ['primary partitioned', 'agent frozen', 'leader lease revoked', 'every lease revoked, primary agent frozen', 'agent and postmaster killed', 'primary postmaster killed', 'primary PostgreSQL frozen', 'primary PostgreSQL stuck in I/O', 'standby PostgreSQL frozen', 'standby partitioned', 'standby cut from the nodes, then the primary lost', 'primary links lossy', 'repeated switchovers', 'switchover, candidate killed', 'switchover, old primary killed', 'switchover, candidate frozen', 'switchover, old primary frozen'];

/** The short subset `npm test` runs. */
export const QUICK_SCENARIOS = ['agent killed', 'replica stalled, then the agent killed (quorum)', 'agent frozen', 'primary PostgreSQL frozen', 'one etcd member stopped'];

/** Runs `names` in `ctx.mode`. */
export async function runScenarios(ctx: ChaosContext, names: readonly string[]): Promise<ScenarioResult[]> {
  const out: ScenarioResult[] = [];
  for (const name of names) {
    const fault = SCENARIOS[name];
    if (!fault) throw new Error(`no scenario ${name} (have: ${Object.keys(SCENARIOS).join(', ')})`);
    out.push(await runScenario(ctx, name, fault));
  }
  return out;
}

/** Switches the cluster to synchronous mode (`true`), quorum mode, or back to asynchronous (`false`), and waits until it took effect. */
export async function setSynchronous(ctx: ChaosContext, mode: boolean | 'quorum'): Promise<void> {
  const primary = await waitConverged(ctx.runner, 120_000);
  if (mode === false) return setSyncMode(ctx, primary, null, 'replica', ctx.nodes.length - 1);
  return setSyncMode(ctx, primary, mode, mode === 'quorum' ? 'quorum_standby' : 'sync_standby', mode === 'quorum' ? ctx.nodes.length - 1 : 1);
}
