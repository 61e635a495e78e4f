/**
 * Health checks of the compiled agent under load on a real 3-node cluster (etcd, PostgreSQL
 * 15, the HA loop ticking every loop_wait = 2 s), side by side with a Patroni cluster
 * (Debian `patroni`) on the same etcd and PostgreSQL when it is installed:
 *
 *   1. idle: private memory (RssAnon of /proc/<pid>/status) of every agent, the median of one
 *      sample a second over the last 10 s of `--idle` s;
 *   2. quiet switchover: no HTTP load, one switchover; the agents' own event-loop delay
 *      (svc_event_loop_delay_* on /metrics, perf_hooks.monitorEventLoopDelay) shows what the HA
 *      loop's work holds up;
 *   3. load on the primary: h2load (Debian `nghttp2-client`), `--connections` keep-alive
 *      connections on `/primary`, opened and warmed for 3 s, then measured for `--seconds`,
 *      with a switchover a third of the way in that demotes the loaded node;
 *   4. load on a replica: the same node, now a replica, on `/replica`, with a switchover
 *      that promotes it;
 *   5. private memory of every agent in the 10 s after the load (median); a plain node:http
 *      server with the same body and the agents' V8 flags under the same load, the cluster
 *      idling beside it, as the ceiling of any Node server on this machine now; and HAProxy
 *      (Debian `haproxy`, when installed) answering the same body by itself, one thread: the
 *      floor of any server here now (a maximum it shows too is the machine's);
 *   6. for each system, `--connections` connections opened at the same moment with one
 *      request each, five rounds: what a burst of new connections (load balancers
 *      reconnecting together) waits for its first answers, apart from the keep-alive figures.
 *
 * Patroni gets steps 1, 3, 4, 5 and 6 the same way, but its load comes from wrk (Debian `wrk`),
 * from the start: its API answers HTTP/1.0 and closes every connection, which wrk opens again
 * and h2load does not. PASS/MISS against the goals: p99 < 5 ms and
 * max < 20 ms under both loads, no event-loop delay above 2 ms in the quiet switchover, and
 * private memory idle and after the load at most Patroni's.
 *
 * The agents run the compiled code (`npm run build` first, unless `--skip-build`) through
 * bin/warden.js with the launcher's V8 flags, or with `--node-args` instead (e.g. to compare
 * flags). `--nice=N` (e.g. `--nice=-10`, as root) runs the benchmark and everything it starts at that
 * scheduling priority: on a machine shared with other work, latencies then show what the
 * measured processes do rather than how long they waited for a core. `--cpu-bursts` loads
 * bench/lib/cpu-bursts-preload.mjs into the agents and prints, for the quiet switchover, the
 * longest stretches their main threads ran between two turns of a 1 ms timer: the part of the
 * event-loop delay that is the agent's own work, without the wait for a CPU; and, for each load,
 * what held the loaded agent's event loop while its slowest answer was outstanding (its main
 * thread on a CPU, waiting for one, or off it otherwise, and a collection that ended there).
 * `--agent-nice=N`
 * (as root) gives the measured HA processes alone (every thread of the agents, of Patroni's
 * daemons and of the plain server) that priority, PostgreSQL, etcd and h2load staying where they
 * are (what the agents start, PostgreSQL after a demotion say, is put back to 0 within 50 ms):
 * what the agent does when the host gives it a CPU first. `--one-host` (2 CPUs or more) puts the
 * loaded node (its agent, fencer and PostgreSQL, Patroni's daemon and its server likewise) alone
 * on CPU 0 and everything else (the other nodes, etcd, h2load) on the others, as one host of a
 * real cluster, where the rest of the cluster and the load balancer are elsewhere: on the
 * benchmark's usual layout the loaded agent waits for a CPU behind two other nodes' agents and
 * servers as much as behind its own. The plain server and HAProxy's floor run on CPU 0 too, and
 * the quiet switchover's goal is then the loaded agent's (the others' figures beside it).
 *
 *   node --import tsx bench/agent-api.ts [--seconds 40] [--connections 32] [--idle 30]
 *        [--skip-build] [--skip-patroni] [--node-args="--max-semi-space-size=2 ..."] [--nice=-10] [--agent-nice=-10] [--cpu-bursts] [--one-host]
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { getPriority, loadavg, setPriority, tmpdir } from 'node:os';
import { performance } from 'node:perf_hooks';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { sleep, waitFor } from '../scripts/lib/processes.js';
import { AGENT_NODE_FLAGS, type ClusterRunner } from '../scripts/lib/cluster-runner.js';
import { startBaselineServer } from './lib/baseline-server.js';
import { startStaticHaproxy, staticHaproxyInstalled } from './lib/static-haproxy.js';
import { DEMO_DCS, othersOf, startBenchCluster } from './lib/bench-cluster.js';
import { runBenchmark } from './lib/cleanup.js';
import { PriorityKeeper, mainMs, readCpuBursts, reniceProcess, schedFigures, type CpuStretch, type GcRecord, type SpawnRecord } from './lib/cpu.js';
import { EventLoopPoller, type DelayWindow } from './lib/event-loop-poll.js';
import { HostPinner, hostSplit, pinProcess } from './lib/host-pinning.js';
import { PatroniCluster, patroniInstalled } from './lib/patroni-cluster.js';
import { atMost, below, fmt, printRuns, printTable, progress, type Row } from './lib/report.js';
import { rssSplitMiB } from './lib/rss.js';
import { max, percentile } from './lib/stats.js';
import { StealSampler } from './lib/steal.js';
import { h2loadInstalled, keepAliveLoad, openingBurst, type OpeningResult } from './lib/h2load.js';
import type { LoadResult } from './lib/load-result.js';
import { wrkInstalled, wrkLoad } from './lib/wrk.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '40' },
    connections: { type: 'string', default: '32' },
    idle: { type: 'string', default: '30' },
    quiet: { type: 'string', default: '35' },
    'skip-build': { type: 'boolean', default: false },
    'skip-patroni': { type: 'boolean', default: false },
    'node-args': { type: 'string' },
    nice: { type: 'string', default: '0' },
    'agent-nice': { type: 'string', default: '0' },
    'cpu-bursts': { type: 'boolean', default: false },
    'one-host': { type: 'boolean', default: false },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const idleMs = Number(values.idle) * 1000;
const quietMs = Number(values.quiet) * 1000;
/** Priority given to the measured HA processes alone (agents, Patroni, the plain server), 0: as started. */
const agentNice = Number(values['agent-nice']);
if (!Number.isInteger(agentNice) || agentNice < -20 || agentNice > 19) throw new Error(`--agent-nice must be an integer -20..19, got ${values['agent-nice']}`);
/** `--one-host`: the loaded node on CPU 0 alone, the rest of the cluster, etcd and the load generator on the others. */
const split = values['one-host'] ? hostSplit() : undefined;
if (values['one-host'] && !split) throw new Error('--one-host needs at least 2 CPUs');
const burstsDir = values['cpu-bursts'] ? mkdtempSync(join(tmpdir(), 'warden-bursts-')) : undefined;
/** A stretch of the probe's timer at least this long in wall time is recorded whatever its CPU (the agent held off its CPU). */
const MIN_WALL_MS = 5;
/** The longest a running thread's CPU time in /proc may lag: one scheduler tick at the lowest common HZ (250). */
const TICK_MS = 4;
const nodeArgs = burstsDir
  ? [...(values['node-args']?.split(' ').filter(Boolean) ?? AGENT_NODE_FLAGS), '--import', `${pathToFileURL(join(repoRoot, 'bench/lib/cpu-bursts-preload.mjs')).href}?dir=${encodeURIComponent(burstsDir)}&min-wall-ms=${MIN_WALL_MS}`]
  : values['node-args']?.split(' ').filter(Boolean);
/** The machine's steal time, sampled every second for the whole benchmark: what the hypervisor took from every load. */
const steal = new StealSampler().start();
/** The agent's event-loop window (EventLoopDelayMonitor's default). */
const WINDOW_MS = 10_000;
/** Seconds the load's connections run before they are measured: they open, the server warms, as health checks find it in service. */
const WARM_UP_S = 3;
/** Patroni's private memory measured the same way when the issue was written, for when Patroni is not installed. */
const PATRONI_FALLBACK_MIB = 28;

/** One load phase and what it measured. */
interface Phase {
  readonly system: 'warden' | 'patroni' | 'node:http' | 'haproxy';
  readonly name: string;
  readonly node: string;
  readonly path: string;
  readonly load: LoadResult;
  /** Event-loop windows of the loaded agent that lay inside the load (Warden only). */
  readonly delay: readonly DelayWindow[];
  /** The switchover during the load: HTTP status and answer time. */
  readonly switchover?: { readonly status: number; readonly ms: number };
  /** What held the loaded agent's event loop while the slowest answer was outstanding (with `--cpu-bursts`). */
  readonly slowestCause?: string;
}

type Rss = ReturnType<typeof rssSplitMiB>;

/**
 * Memory of each process as the median of one sample a second for `seconds`: a single reading
 * of a garbage-collected process depends on how long ago its last collection ran.
 */
async function settledRss(pids: ReadonlyMap<string, number | undefined>, seconds = 10): Promise<Map<string, Rss>> {
  const samples = new Map<string, NonNullable<Rss>[]>([...pids.keys()].map((n) => [n, []]));
  for (let i = 0; i < seconds; i++) {
    for (const [n, pid] of pids) {
      const r = pid === undefined ? undefined : rssSplitMiB(pid);
      if (r) samples.get(n)!.push(r);
    }
    await sleep(1000);
  }
  const med = (xs: readonly number[]) => percentile(xs, 50);
  return new Map([...samples].map(([n, xs]) => [n, xs.length ? { rss: med(xs.map((x) => x.rss)), anon: med(xs.map((x) => x.anon)), file: med(xs.map((x) => x.file)) } : undefined]));
}

/** Waits until every replica replayed to within 1 MiB of the primary (a switchover candidate must be caught up). */
async function waitCaughtUp(runner: ClusterRunner): Promise<void> {
  await waitFor('the replicas to catch up', 60_000, async () => {
    const docs = await Promise.all(runner.layout.nodes.map((n) => runner.nodeStatus(n.name)));
    const top = Math.max(...docs.map((d) => Number((d?.xlog as { location?: number } | undefined)?.location ?? 0)));
    const replayed = docs.filter((d) => d?.role === 'replica').map((d) => Number((d?.xlog as { replayed_location?: number } | undefined)?.replayed_location ?? 0));
    return replayed.length === docs.length - 1 && replayed.every((r) => top - r < 1024 * 1024) ? true : undefined;
  }, 200);
}

/** POST /switchover on `leader`'s agent; status and answer time. */
async function wardenSwitchover(runner: ClusterRunner, leader: string, candidate: string): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  const r = await fetch(`${runner.apiUrl(leader)}/switchover`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ leader, candidate }),
    signal: AbortSignal.timeout(60_000),
  });
  await r.arrayBuffer();
  return { status: r.status, ms: performance.now() - t0 };
}

/**
 * Loads `url` (its connections opened and warmed for WARM_UP_S, then measured for `seconds`)
 * and, `seconds / 3` into the measured period, `switchover()`; the figures, the switchover's
 * outcome and the measured period (performance.now() and epoch ms). `reopening`: wrk instead,
 * measured from the start, which opens a connection again whenever the server closed one
 * (Patroni's API answers HTTP/1.0 and closes every connection; h2load does not reopen them).
 */
async function loadWithSwitchover(
  url: string,
  pid: number | undefined,
  switchover: () => Promise<{ status: number; ms: number }>,
  reopening = false,
): Promise<{ load: LoadResult; switchover: { status: number; ms: number }; from: number; to: number; fromWall: number; toWall: number }> {
  const warmUpS = reopening ? 0 : WARM_UP_S;
  let from = performance.now() + warmUpS * 1000;
  let fromWall = Date.now() + warmUpS * 1000;
  const atMeasureStart = () => {
    from = performance.now();
    fromWall = Date.now();
  };
  const load = reopening ? wrkLoad(url, connections, seconds, pid) : keepAliveLoad(url, connections, seconds, { warmUpSeconds: warmUpS, ...(pid === undefined ? {} : { watchPid: pid }), atMeasureStart });
  await sleep(warmUpS * 1000 + (seconds * 1000) / 3);
  const sw = await switchover();
  progress(`  switchover answered ${sw.status} in ${sw.ms.toFixed(0)} ms`);
  const result = await load;
  return { load: result, switchover: sw, from, to: performance.now(), fromWall, toWall: Date.now() };
}

/** Each agent's CPU stretches (from the preload) that ended between `from` and `to` (epoch ms), with its collections and process starts. */
interface NodeBursts {
  readonly bursts: CpuStretch[];
  readonly gcs: GcRecord[];
  readonly spawns: SpawnRecord[];
  readonly turns: number;
}

function burstsWithin(dir: string, pids: ReadonlyMap<string, number | undefined>, from: number, to: number): Map<string, NodeBursts> {
  return new Map(
    [...pids].map(([n, pid]) => {
      const recs = pid === undefined ? [] : readCpuBursts(join(dir, `${pid}.jsonl`)).filter((r) => r.at >= from && r.at <= to);
      return [
        n,
        {
          bursts: recs.filter((r): r is CpuStretch => r.kind === 'burst'),
          gcs: recs.filter((r): r is GcRecord => r.kind === 'gc'),
          spawns: recs.filter((r): r is SpawnRecord => r.kind === 'spawn'),
          turns: recs.reduce((s, r) => s + (r.kind === 'turns' ? r.turns : 0), 0),
        },
      ];
    }),
  );
}


/** What ended within 1 ms of a stretch's end: a collection or a process start named by its pause. */
function causeOf(b: CpuStretch, n: NodeBursts): string {
  const near = <T extends { at: number }>(xs: readonly T[]) => xs.filter((x) => x.at >= b.at - b.wall_ms - 1 && x.at <= b.at + 1);
  const parts = [...near(n.gcs).map((g) => `${g.gc} ${fmt(g.ms)}`), ...near(n.spawns).map((s) => `spawn ${[s.file, ...(s.args ?? [])].map((a) => a.split('/').pop()).join(' ').slice(0, 60)} ${fmt(s.ms)}`)];
  return parts.length ? `, ${parts.join(' + ')}` : '';
}

function describeBursts(byNode: ReadonlyMap<string, NodeBursts>, origin: number): string[] {
  return [...byNode].map(([n, nb]) => {
    const top = [...nb.bursts].sort((a, b) => mainMs(b) - mainMs(a)).slice(0, 6);
    const over2 = nb.bursts.filter((b) => mainMs(b) > 2).length;
    const spawns = nb.spawns.length ? `; ${nb.spawns.length} process starts, longest ${fmt(max(nb.spawns.map((s) => s.ms)))} ms` : '';
    const gcMax = nb.gcs.length ? `; longest GC pause ${fmt(max(nb.gcs.map((g) => g.ms)))} ms` : '';
    return `${n}: ${nb.turns} turns, ${over2} over 2 ms${spawns}${gcMax}; longest ${top.map((b) => `${fmt(mainMs(b))} (process ${fmt(b.cpu_ms)}, wall ${fmt(b.wall_ms)}${causeOf(b, nb)}) at +${fmt((b.at - origin) / 1000)} s`).join(', ') || 'none'}`;
  });
}

/**
 * What the loaded agent's event loop did while the slowest answer was outstanding: the longest
 * of its stretches between two turns of the probe's timer that overlapped the request, split
 * into its main thread's CPU, its wait for a CPU and the rest (off a CPU without waiting for
 * one: asleep or blocked, e.g. on V8's helper thread, or its CPU taken by the hypervisor), and
 * the machine's steal time around it. Without such a stretch the loop turned at least every
 * MIN_WALL_MS meanwhile, and the answer waited outside the agent.
 */
function explainSlowest(load: LoadResult, nb: NodeBursts): string | undefined {
  const s = load.slowest?.[0];
  if (s?.startMs === undefined) return undefined;
  const end = s.startMs + s.ms;
  const around = steal.around(s.startMs, end);
  const stolen = around ? `; the machine's steal time in the ${fmt(around.spanMs / 1000)} s around it ${fmt(around.ms)} ms` : '';
  const overlapping = nb.bursts.filter((b) => b.at >= s.startMs! && b.at - b.wall_ms <= end);
  if (overlapping.length === 0) return `the agent's event loop turned at least every ${MIN_WALL_MS} ms meanwhile: the answer waited outside it${stolen}`;
  const b = overlapping.reduce((a, c) => (c.wall_ms > a.wall_ms ? c : a));
  const wait = b.wait_ms ?? 0;
  const rest = Math.max(0, b.wall_ms - mainMs(b) - wait);
  // Never put back on a CPU: the thread was on its CPU all along as the kernel saw it, so what
  // is missing the hypervisor ran elsewhere (steal time is counted as neither). Below a tick
  // the gap may be the kernel's late update of a running thread's CPU time instead.
  const off =
    b.switches === undefined ? '' : b.switches === 0 && rest > TICK_MS ? ', never off its CPU as the kernel saw it: the hypervisor took it' : `, put back on a CPU ${b.switches} times`;
  return `the agent's event loop held ${fmt(b.wall_ms)} ms then: its main thread on a CPU ${fmt(mainMs(b))} ms, waiting for one ${fmt(wait)} ms, off it otherwise ${fmt(rest)} ms${off}${causeOf(b, nb)}${stolen}`;
}

/** After the probe's next write: the loaded agent's stretches under one load, printed, and what held it at the slowest answer. */
async function reportLoadBursts(dir: string, node: string, pid: number | undefined, load: LoadResult, from: number, to: number): Promise<string | undefined> {
  await sleep(5500);
  const byNode = burstsWithin(dir, new Map([[node, pid]]), from, to);
  for (const line of describeBursts(byNode, from)) progress(`  main-thread CPU between two turns of a 1 ms timer under the load, ms: ${line}`);
  const cause = explainSlowest(load, byNode.get(node)!);
  if (cause) progress(`  slowest answer ${fmt(load.max)} ms: ${cause}`);
  return cause;
}

/** A burst of new connections to one system's health check (see openingBurst). */
interface Opening {
  readonly system: Phase['system'];
  readonly path: string;
  readonly result: OpeningResult;
}

function describeOpening(o: Opening): string {
  const r = o.result;
  return `${r.connections} connections opened at once on ${o.path}, first answers over ${r.rounds} rounds: median ${fmt(r.p50)} ms, max ${fmt(r.max)} ms`;
}

function describeLoad(p: Phase): string {
  const l = p.load;
  const d = p.delay.length ? `; event loop p99 ${fmt(max(p.delay.map((w) => w.p99)))} ms, max ${fmt(max(p.delay.map((w) => w.max)))} ms` : '';
  const slow = l.slowest?.length ? `; slowest answers ${l.slowest.map((x) => `${fmt(x.ms)} ms at +${fmt(x.atS)} s`).join(', ')}` : '';
  const at = p.switchover && p.system !== 'patroni' ? ` (switchover at +${Math.round(seconds / 3)} s)` : '';
  const st = stealNote(l);
  return `${fmt(l.reqPerSec)} req/s, p50 ${fmt(l.p50)} ms, p99 ${fmt(l.p99)} ms, max ${fmt(l.max)} ms, non-2xx ${l.non2xx}, errors ${l.errors}${d}${slow}${at}${st ? `; ${st}` : ''}`;
}

/** The hypervisor's take over a load's measured period, when the load generator logged its start. */
function stealNote(l: LoadResult): string {
  const st = l.fromMs === undefined ? undefined : steal.within(l.fromMs, l.fromMs + l.seconds * 1000);
  return st ? `steal time ${fmt(st.msPerSecond)} ms/s over the load, up to ${fmt(st.maxMs)} ms in a second` : '';
}

await runBenchmark(async () => {
  if (!h2loadInstalled()) throw new Error('h2load is not installed (Debian package nghttp2-client)');
  // Inherited by every process started from here on (etcd, PostgreSQL, the agents, h2load, Patroni).
  if (Number(values.nice) !== 0) setPriority(Number(values.nice));
  // Inherited the same way: everything starts on the CPUs of the rest, the loaded node is moved.
  if (split) pinProcess(process.pid, split.rest);
  const loadAtStart = loadavg();
  if (!values['skip-build']) {
    progress('npm run build (the agents run the compiled code)');
    await promisify(execFile)('npm', ['run', 'build'], { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024 });
  }
  const phases: Phase[] = [];
  const openings: Opening[] = [];

  // ---------------------------------------------------------------- Warden
  const cluster = await startBenchCluster(DEMO_DCS, 'bench', nodeArgs ? { agentNodeArgs: nodeArgs } : {});
  const { runner } = cluster;
  const first = cluster.primary;
  const loaded = othersOf(runner, first)[0]!;
  const pidOf = (n: string) => runner.agentPid(n);
  const measured = new Set<number>();
  const keeper = agentNice !== 0 ? new PriorityKeeper(agentNice, () => measured).start() : null;
  const renice = (pid: number) => {
    measured.add(pid);
    reniceProcess(pid, agentNice);
  };
  if (agentNice !== 0) for (const n of runner.layout.nodes) renice(pidOf(n.name)!);
  const host = split ? new HostPinner(split.host, () => [pidOf(loaded), runner.fencerPid(loaded), runner.postmasterPid(loaded)]).start() : null;
  const pollers = new Map(runner.layout.nodes.map((n) => [n.name, new EventLoopPoller(runner.apiUrl(n.name)).start()]));
  progress(`settling ${idleMs / 1000} s (memory sampled over the last 10 s)`);
  const agentPids = () => new Map(runner.layout.nodes.map((n) => [n.name, pidOf(n.name)]));
  await sleep(Math.max(0, idleMs - 10_000));
  const wardenIdle = await settledRss(agentPids());
  progress(`idle private memory: ${[...wardenIdle].map(([n, v]) => `${n} ${fmt(v?.anon ?? Number.NaN)} MiB`).join(', ')}`);

  // Quiet: the HA loop and a switchover (first -> loaded), no HTTP load.
  await waitCaughtUp(runner);
  const q0 = performance.now();
  const q0Wall = Date.now();
  // How long each agent's main thread was runnable but waited for a CPU over the phase: the
  // event-loop delay counts that time too, and on a small machine it is most of it.
  const sched0 = new Map([...agentPids()].map(([n, pid]) => [n, pid === undefined ? undefined : schedFigures(pid)]));
  // A window is counted only when it started after q0: waiting one window first puts the
  // switchover inside a counted window of every agent (their windows are not aligned).
  await sleep(WINDOW_MS + 1000);
  const quietSwitch = await wardenSwitchover(runner, first, loaded);
  progress(`quiet switchover ${first} -> ${loaded}: ${quietSwitch.status} in ${quietSwitch.ms.toFixed(0)} ms`);
  await sleep(Math.max(0, quietMs - (performance.now() - q0)));
  const q1 = performance.now();
  const q1Wall = Date.now();
  const quietSched = [...agentPids()].map(([n, pid]) => {
    const a = sched0.get(n);
    const b = pid === undefined ? undefined : schedFigures(pid);
    return a && b ? `${n} ${fmt(b.waitMs - a.waitMs)} (on CPU ${fmt(b.onCpuMs - a.onCpuMs)})` : `${n} n/a`;
  });
  progress(`quiet phase: time the agents' main threads waited for a CPU, ms: ${quietSched.join(', ')}`);
  // The probe writes its records every 5 s: wait for those of the phase's last seconds.
  await sleep(burstsDir ? 5500 : 1000);
  const quietByNode = new Map([...pollers].map(([n, p]) => [n, p.within(q0, q1, WINDOW_MS)]));
  const quietDelay = [...quietByNode.values()].flat();
  progress(`quiet phase: ${quietDelay.length} event-loop windows, p99 up to ${fmt(max(quietDelay.map((w) => w.p99)))} ms, max ${fmt(max(quietDelay.map((w) => w.max)))} ms`);
  const quietBursts = burstsDir ? burstsWithin(burstsDir, agentPids(), q0Wall, q1Wall) : undefined;
  if (quietBursts) for (const line of describeBursts(quietBursts, q0Wall)) progress(`quiet phase, main-thread CPU between two turns of a 1 ms timer, ms: ${line}`);

  // Load on `loaded` as primary (/primary), switched over to `first` under load.
  await runner.waitHealthy(180_000);
  await waitCaughtUp(runner);
  progress(`load: ${connections} connections on ${loaded}'s /primary for ${seconds} s, switchover ${loaded} -> ${first} at ${Math.round(seconds / 3)} s`);
  const l1 = await loadWithSwitchover(`${runner.apiUrl(loaded)}/primary`, pidOf(loaded), () => wardenSwitchover(runner, loaded, first));
  const p1: Phase = { system: 'warden', name: 'primary, demoted under load', node: loaded, path: '/primary', load: l1.load, delay: pollers.get(loaded)!.within(l1.from, l1.to, WINDOW_MS), switchover: l1.switchover };
  progress(`  ${describeLoad(p1)}`);
  phases.push(burstsDir ? { ...p1, slowestCause: await reportLoadBursts(burstsDir, loaded, pidOf(loaded), l1.load, l1.fromWall, l1.toWall) } : p1);

  // Load on `loaded` as replica (/replica), promoted under load.
  await runner.waitHealthy(180_000);
  await waitCaughtUp(runner);
  progress(`load: ${connections} connections on ${loaded}'s /replica for ${seconds} s, switchover ${first} -> ${loaded} at ${Math.round(seconds / 3)} s`);
  const l2 = await loadWithSwitchover(`${runner.apiUrl(loaded)}/replica`, pidOf(loaded), () => wardenSwitchover(runner, first, loaded));
  const p2: Phase = { system: 'warden', name: 'replica, promoted under load', node: loaded, path: '/replica', load: l2.load, delay: pollers.get(loaded)!.within(l2.from, l2.to, WINDOW_MS), switchover: l2.switchover };
  progress(`  ${describeLoad(p2)}`);
  phases.push(burstsDir ? { ...p2, slowestCause: await reportLoadBursts(burstsDir, loaded, pidOf(loaded), l2.load, l2.fromWall, l2.toWall) } : p2);
  const wardenAfter = await settledRss(agentPids());
  progress(`private memory after the load: ${[...wardenAfter].map(([n, v]) => `${n} ${fmt(v?.anon ?? Number.NaN)} MiB`).join(', ')}`);
  openings.push({ system: 'warden', path: '/primary', result: await openingBurst(`${runner.apiUrl(loaded)}/primary`, connections) });
  progress(`  ${describeOpening(openings.at(-1)!)}`);
  const idleDelay = [...pollers.values()].flatMap((p) => p.windows.filter((w) => w.seenAt < q0));
  for (const p of pollers.values()) p.stop();
  host?.stop();
  if (host) progress(`${loaded}'s processes moved to CPU ${split!.host}: ${host.moved}`);

  // The ceiling of a Node server here, now: a plain node:http server sending a body of the same size, with the
  // agents' V8 flags, while the cluster idles beside it as it did beside the loaded agent.
  const body = Buffer.from(await (await fetch(`${runner.apiUrl(loaded)}/primary`)).arrayBuffer()).length;
  const baseline = await startBaselineServer(body, nodeArgs ?? AGENT_NODE_FLAGS);
  if (agentNice !== 0) renice(baseline.pid);
  if (split) pinProcess(baseline.pid, split.host);
  progress(`load: ${connections} connections on a plain node:http server (${body} B body) for ${Math.round(seconds / 2)} s, the cluster idle beside it`);
  phases.push({ system: 'node:http', name: 'plain node:http, same body', node: '', path: '/', load: await keepAliveLoad(baseline.url, connections, Math.round(seconds / 2), { warmUpSeconds: WARM_UP_S, watchPid: baseline.pid }), delay: [] });
  progress(`  ${describeLoad(phases.at(-1)!)}`);
  openings.push({ system: 'node:http', path: '/', result: await openingBurst(baseline.url, connections) });
  progress(`  ${describeOpening(openings.at(-1)!)}`);
  await baseline.stop();
  // The floor of any server here, now: HAProxy answering the same body itself, one thread.
  if (staticHaproxyInstalled()) {
    const floor = await startStaticHaproxy(body);
    if (agentNice !== 0) renice(floor.pid);
    if (split) pinProcess(floor.pid, split.host);
    progress(`load: ${connections} connections on HAProxy answering by itself (${body} B body) for ${Math.round(seconds / 2)} s, the cluster idle beside it`);
    phases.push({ system: 'haproxy', name: 'HAProxy answering by itself, same body', node: '', path: '/', load: await keepAliveLoad(floor.url, connections, Math.round(seconds / 2), { warmUpSeconds: WARM_UP_S, watchPid: floor.pid }), delay: [] });
    progress(`  ${describeLoad(phases.at(-1)!)}`);
    openings.push({ system: 'haproxy', path: '/', result: await openingBurst(floor.url, connections) });
    progress(`  ${describeOpening(openings.at(-1)!)}`);
    await floor.stop();
  }
  await cluster.stop();

  // ---------------------------------------------------------------- Patroni
  let patroniIdle: Map<string, Rss> | undefined;
  let patroniAfter: Map<string, Rss> | undefined;
  let patroniLoaded = '';
  if (!values['skip-patroni'] && patroniInstalled() && wrkInstalled()) {
    const { cluster: pc, primary: p0 } = await PatroniCluster.start(DEMO_DCS);
    progress(`settling ${idleMs / 1000} s (memory sampled over the last 10 s)`);
    const names = pc.runner.layout.nodes.map((n) => n.name);
    const patroniPids = () => new Map(names.map((n) => [n, pc.pid(n)]));
    // Patroni's daemon starts its PostgreSQL itself: the server is among its descendants.
    const phost = split ? new HostPinner(split.host, () => [pc.pid(p0)]).start() : null;
    if (agentNice !== 0) for (const n of names) renice(pc.pid(n)!);
    await sleep(Math.max(0, idleMs - 10_000));
    patroniIdle = await settledRss(patroniPids());
    progress(`Patroni idle private memory: ${[...patroniIdle].map(([n, v]) => `${n} ${fmt(v?.anon ?? Number.NaN)} MiB`).join(', ')}`);
    const node = { name: p0, pid: pc.pid(p0)!, apiUrl: pc.runner.apiUrl(p0) };
    const other = { name: names.find((n) => n !== p0)! };
    patroniLoaded = node.name;
    const timed = async (leader: string, candidate: string) => {
      const t0 = performance.now();
      const status = await pc.switchover(leader, candidate);
      return { status, ms: performance.now() - t0 };
    };
    progress(`load: ${connections} connections on Patroni ${node.name}'s /primary for ${seconds} s, switchover at ${Math.round(seconds / 3)} s (wrk: Patroni closes every connection after its answer, wrk opens it again)`);
    const pl1 = await loadWithSwitchover(`${node.apiUrl}/primary`, node.pid, () => timed(node.name, other.name), true);
    phases.push({ system: 'patroni', name: 'primary, demoted under load', node: node.name, path: '/primary', load: pl1.load, delay: [], switchover: pl1.switchover });
    progress(`  ${describeLoad(phases.at(-1)!)}`);
    await pc.waitHealthy(180_000);
    // Patroni refuses a switchover to a member that is not caught up: give the demoted node a moment to stream.
    await sleep(5000);
    progress(`load: ${connections} connections on Patroni ${node.name}'s /replica for ${seconds} s, switchover back at ${Math.round(seconds / 3)} s`);
    const pl2 = await loadWithSwitchover(`${node.apiUrl}/replica`, node.pid, () => timed(other.name, node.name), true);
    phases.push({ system: 'patroni', name: 'replica, promoted under load', node: node.name, path: '/replica', load: pl2.load, delay: [], switchover: pl2.switchover });
    progress(`  ${describeLoad(phases.at(-1)!)}`);
    patroniAfter = await settledRss(patroniPids());
    progress(`Patroni private memory after the load: ${[...patroniAfter].map(([n, v]) => `${n} ${fmt(v?.anon ?? Number.NaN)} MiB`).join(', ')}`);
    openings.push({ system: 'patroni', path: '/primary', result: await openingBurst(`${node.apiUrl}/primary`, connections) });
    progress(`  ${describeOpening(openings.at(-1)!)}`);
    phost?.stop();
    await pc.stop();
  } else {
    progress(values['skip-patroni'] ? 'Patroni skipped (--skip-patroni)' : patroniInstalled() ? 'wrk is not installed (Debian package wrk): Patroni skipped' : 'Patroni is not installed (Debian package patroni): compared with the figure measured before, 28 MiB');
  }

  keeper?.stop();
  if (keeper) progress(`processes the measured ones started, put back to nice 0: ${keeper.reset}`);

  // ---------------------------------------------------------------- report
  printRuns(
    `health checks under load (h2load, ${connections} keep-alive connections opened and warmed for ${WARM_UP_S} s, then measured for ${seconds} s, switchover at ${Math.round(seconds / 3)} s of those; latencies in ms; event loop: the loaded agent's own windows of ${WINDOW_MS / 1000} s inside the load)`,
    ['system', 'phase', 'node', 'path', 'req/s', 'p50', 'p99', 'p99.9', 'max', 'non-2xx', 'errors', 'CPU µs/req', 'loop p99', 'loop max', 'switchover'],
    phases.map((p) => [
      p.system,
      p.name,
      p.node,
      p.path,
      p.load.reqPerSec,
      p.load.p50,
      p.load.p99,
      p.load.p999,
      p.load.max,
      p.load.non2xx,
      p.load.errors,
      p.load.cpuUsPerRequest ?? Number.NaN,
      p.delay.length ? max(p.delay.map((w) => w.p99)) : Number.NaN,
      p.delay.length ? max(p.delay.map((w) => w.max)) : Number.NaN,
      p.switchover ? `${p.switchover.status} in ${Math.round(p.switchover.ms)} ms` : '',
    ]),
  );
  const find = (system: Phase['system'], path: string) => phases.find((p) => p.system === system && p.path === path);
  const base = find('node:http', '/');
  const floor = find('haproxy', '/');
  const baseNote = [
    base ? `plain node:http here: p99 ${fmt(base.load.p99)} ms, max ${fmt(base.load.max)} ms` : '',
    floor ? `HAProxy answering by itself: p99 ${fmt(floor.load.p99)} ms, max ${fmt(floor.load.max)} ms` : '',
  ].filter(Boolean).join('; ');
  const rows: Row[] = [];
  for (const path of ['/primary', '/replica']) {
    const w = find('warden', path);
    const p = find('patroni', path);
    if (!w) continue;
    const pNote = p ? `; Patroni: ${fmt(p.load.reqPerSec)} req/s, p99 ${fmt(p.load.p99)} ms, max ${fmt(p.load.max)} ms` : '';
    rows.push(
      { figure: `${path} @${connections}, switchover under load: p99`, value: w.load.p99, unit: 'ms', goal: below(5), note: `${fmt(w.load.reqPerSec)} req/s; ${baseNote}${pNote}` },
      { figure: `${path} @${connections}, switchover under load: max`, value: w.load.max, unit: 'ms', goal: below(20), note: [w.slowestCause, stealNote(w.load)].filter(Boolean).join('; ') },
      { figure: `${path} @${connections}: agent's event loop, p99 / max of its windows`, value: max(w.delay.map((x) => x.p99)), unit: 'ms', note: `max ${fmt(max(w.delay.map((x) => x.max)))} ms over ${w.delay.length} windows` },
    );
  }
  // With --one-host the goal is the pinned agent's, as on a host of its own; the other agents
  // share the rest's CPUs with etcd, two PostgreSQL servers and the load generator.
  const goalNodes = split ? [loaded] : [...quietByNode.keys()];
  const restNodes = split ? [...quietByNode.keys()].filter((n) => n !== loaded) : [];
  const whose = split ? `${loaded}, alone on CPU ${split.host}` : 'every agent';
  const quietOf = (nodes: readonly string[]) => nodes.flatMap((n) => quietByNode.get(n) ?? []);
  const schedNote = `includes time the OS ran other work: main threads waited for a CPU, ms: ${quietSched.join(', ')}`;
  const quietRows = (): Row[] => {
    const goal = quietOf(goalNodes);
    const out: Row[] = [{ figure: `event loop, quiet switchover (HA loop only): max of ${whose}`, value: max(goal.map((w) => w.max)), unit: 'ms', goal: atMost(2), note: `p99 up to ${fmt(max(goal.map((w) => w.p99)))} ms; ${goal.length} windows; ${schedNote}` }];
    if (split) {
      const rest = quietOf(restNodes);
      out.push({ figure: `event loop, quiet switchover: max of the other agents (${restNodes.join(', ')}, on CPU ${split.rest})`, value: max(rest.map((w) => w.max)), unit: 'ms', note: `p99 up to ${fmt(max(rest.map((w) => w.p99)))} ms; ${rest.length} windows` });
    }
    if (!quietBursts) return out;
    const stretches = (nodes: readonly string[]) => nodes.flatMap((n) => quietBursts.get(n)?.bursts ?? []);
    out.push(
      { figure: `agent's main thread, CPU between two event-loop turns, quiet switchover: longest of ${whose}`, value: max(stretches(goalNodes).map(mainMs)), unit: 'ms', goal: atMost(2), note: `what the agent's own work held its event loop for, without the wait for a CPU (/proc/thread-self/schedstat around a 1 ms timer); stretches over 2 ms: ${[...quietBursts].map(([n, b]) => `${n} ${b.bursts.filter((x) => mainMs(x) > 2).length}`).join(', ')}${split ? `; longest of the other agents ${fmt(max(stretches(restNodes).map(mainMs)))} ms` : ''}` },
      { figure: `agent process CPU between two event-loop turns, quiet switchover: longest of ${whose}`, value: max(stretches(goalNodes).map((x) => x.cpu_ms)), unit: 'ms', note: 'process.cpuUsage(): other threads count too' },
    );
    return out;
  };
  const opening = (system: Phase['system']) => openings.find((o) => o.system === system);
  const wOpen = opening('warden');
  if (wOpen) {
    const others = (['node:http', 'haproxy', 'patroni'] as const).flatMap((sys) => {
      const o = opening(sys);
      return o ? [`${sys === 'node:http' ? 'plain node:http' : sys === 'haproxy' ? 'HAProxy answering by itself' : 'Patroni'}: median ${fmt(o.result.p50)} ms, max ${fmt(o.result.max)} ms`] : [];
    });
    rows.push({ figure: `${connections} connections opened at once on /primary, first answer: max of ${wOpen.result.rounds} rounds`, value: wOpen.result.max, unit: 'ms', note: `median ${fmt(wOpen.result.p50)} ms (a burst of new connections, apart from the keep-alive figures above); ${others.join('; ')}` });
  }
  rows.push(
    ...quietRows(),
    { figure: 'event loop, idle (HA loop only): max of every agent', value: max(idleDelay.map((w) => w.max)), unit: 'ms', note: `p99 up to ${fmt(max(idleDelay.map((w) => w.p99)))} ms; ${idleDelay.length} windows` },
  );
  const anon = (m: Map<string, Rss> | undefined, n: string) => m?.get(n)?.anon ?? Number.NaN;
  const maxAnon = (m: Map<string, Rss> | undefined) => max([...(m?.values() ?? [])].map((v) => v?.anon ?? Number.NaN));
  const list = (m: Map<string, Rss> | undefined) => [...(m ?? [])].map(([n, v]) => `${n} ${fmt(v?.anon ?? Number.NaN)}`).join(', ');
  const pIdle = patroniIdle ? maxAnon(patroniIdle) : PATRONI_FALLBACK_MIB;
  const pAfter = patroniAfter ? anon(patroniAfter, patroniLoaded) : PATRONI_FALLBACK_MIB;
  // The CPU probe's own buffers and records sit in the agents' heaps too.
  const ref = `${patroniIdle ? 'Patroni measured here' : 'Patroni as measured before (not installed here)'}${burstsDir ? '; the agents carry the --cpu-bursts probe (a few MiB): take memory from a run without it' : ''}`;
  rows.push(
    { figure: 'private memory (RssAnon) idle, largest agent (median of 10 s)', value: maxAnon(wardenIdle), unit: 'MiB', goal: atMost(pIdle), note: `agents: ${list(wardenIdle)}; goal: ${ref}${patroniIdle ? ` (${list(patroniIdle)})` : ''}` },
    { figure: `private memory after the load, loaded agent ${loaded} (median of 10 s)`, value: anon(wardenAfter, loaded), unit: 'MiB', goal: atMost(pAfter), note: `agents: ${list(wardenAfter)}; goal: ${ref}${patroniAfter ? ` (${list(patroniAfter)}; loaded ${patroniLoaded})` : ''}` },
    { figure: 'resident (VmRSS) idle, largest agent', value: max([...wardenIdle.values()].map((v) => v?.rss ?? Number.NaN)), unit: 'MiB', note: patroniIdle ? `Patroni: ${fmt(max([...patroniIdle.values()].map((v) => v?.rss ?? Number.NaN)))} MiB (mapped files are mostly the node / python binaries, shared)` : '' },
  );
  printTable(`agent health checks and memory (compiled agent${nodeArgs ? `, node ${nodeArgs.join(' ')}` : ', launcher flags'}; nice ${getPriority()}${agentNice !== 0 ? `, HA processes ${agentNice}` : ''}${split ? `; the loaded node alone on CPU ${split.host}, the rest on ${split.rest}` : ''}; load average at start ${loadAtStart.map((x) => x.toFixed(1)).join(' ')}, at end ${loadavg().map((x) => x.toFixed(1)).join(' ')})`, rows);
});
