/**
 * What one agent's own work costs as its cluster grows: the CPU of one HA loop tick (as the
 * leader, as a replica, and as a candidate in a leader race that asks every other member), the
 * cluster view decoded from the DCS's keys, and the `/cluster` document serialised, for
 * clusters of 3 to 200 members. The agents run the real HA loop, decision code and codec over
 * the in-memory DCS and fake databases of the simulation, all in this process, so the figures
 * are the agent's computation alone, without I/O or a wait for a CPU: what a tick would hold
 * its event loop for if every answer arrived at once.
 *
 *   node --import tsx bench/cluster-size.ts [--members 3,10,30,100,200] [--ticks 40] [--sync quorum|true|false]
 */
import { parseArgs } from 'node:util';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { parseCluster } from '../src/adapters/cluster-store/codec.js';
import { clusterDocument } from '../src/domain/cluster/model/cluster-document.js';
import type { NodeStatus } from '../src/domain/cluster/model/status.js';
import type { PeerApi } from '../src/ports/peer-api.js';
import { SimCluster, type SimNode } from '../test/sim/sim-cluster.js';
import { machineInfo, machineLine } from './lib/machine.js';
import { atMost, printTable, progress, type Row } from './lib/report.js';
import { max, median, percentile } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    members: { type: 'string', default: '3,10,30,100,200' },
    ticks: { type: 'string', default: '40' },
    sync: { type: 'string', default: 'quorum' },
  },
});
const sizes = values.members!.split(',').map(Number);
const ticks = Number(values.ticks);
const syncMode = values.sync === 'quorum' ? 'quorum' : values.sync === 'true';

/** The goal of a single stretch of the agent's own work: nothing in a tick holds the event loop over 2 ms. */
const STRETCH_GOAL_MS = 2;

/** Timed runs of one piece of work: ms each, and whether a garbage collection fell in it. */
interface Samples {
  readonly ms: number[];
  readonly collected: boolean[];
}

/** Collections of this process (start and end, ms on performance.now()'s clock). */
const collections: { start: number; end: number }[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) collections.push({ start: e.startTime, end: e.startTime + e.duration });
}).observe({ entryTypes: ['gc'] });

/** CPU of the whole process (every thread), ms. */
function processCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/**
 * Times `fn` `n` times after `warm` untimed runs (V8 compiles what runs often). Nothing here
 * waits on I/O, so what the main thread spent is at most the wall time (which also counts a
 * preemption by another process) and at most the process's CPU (which also counts V8's helper
 * threads): each run counts the smaller of the two. (The kernel's per-thread figure in
 * /proc/thread-self/schedstat moves only at scheduler ticks while a thread never sleeps.) A
 * run in which this process collected garbage is marked: the benchmark's heap holds every
 * simulated member, many times one agent's.
 */
async function sample(n: number, fn: () => Promise<unknown> | unknown, warm = 5): Promise<Samples> {
  for (let i = 0; i < warm; i++) await fn();
  const windows: [number, number][] = [];
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const c0 = processCpuMs();
    const t0 = performance.now();
    await fn();
    const t1 = performance.now();
    ms.push(Math.min(t1 - t0, processCpuMs() - c0));
    windows.push([t0, t1]);
  }
  // GC entries reach the observer in a later task.
  await new Promise((resolve) => setTimeout(resolve, 10));
  return {
    ms,
    collected: windows.map(([a, b]) => collections.some((c) => c.start < b && c.end > a)),
  };
}

/** The runs without a collection in them. */
function clean(s: Samples): number[] {
  return s.ms.filter((_, i) => !s.collected[i]);
}

/** `median X, p95 Y, max Z ms over N runs (K with a collection, left out)`. */
function summary(s: Samples): string {
  const xs = clean(s);
  const gc = s.ms.length - xs.length;
  return `median ${median(xs).toFixed(3)}, p95 ${percentile(xs, 95).toFixed(3)}, max ${max(xs).toFixed(3)} ms over ${xs.length} runs${gc ? ` (${gc} with a collection left out: longest ${max(s.ms.filter((_, i) => s.collected[i])).toFixed(2)} ms)` : ''}`;
}

/**
 * Makes `node`'s fake database answer its probe with the facts of one real probe: the fake
 * computes a primary's replication state over every replica on each probe (the server's work,
 * not the agent's), which would otherwise be timed with the agent's tick.
 */
async function probeFromCache(node: SimNode): Promise<void> {
  const facts = await node.db.probe();
  node.db.probe = async () => facts;
}

/**
 * Takes the agents of `nodes` out of the process: each stops (as if killed: its timers and its
 * watch end; its member key stays, as no lease expires while the fake clock stands still).
 * Returns the status each held, by API URL: what it would answer a race from elsewhere on the
 * network. What the other members compute runs in their own processes, not in the measured agent's.
 */
async function detach(nodes: readonly SimNode[]): Promise<Map<string, NodeStatus>> {
  const statuses = new Map<string, NodeStatus>();
  for (const n of nodes) {
    const status = await n.loop.freshStatus();
    if (status) statuses.set(n.apiUrl, status);
    n.killAgent();
  }
  return statuses;
}

/**
 * Makes `node`'s agent ask its peers through a table of their answers: the simulation's peer
 * calls cost more than the agent's own work (a timer and an abort signal each), and over HTTP
 * that cost is spread over the turns in which the answers arrive.
 */
function peersFromTable(node: SimNode, statuses: ReadonlyMap<string, NodeStatus>): void {
  // The tick's ports are private to the loop; a benchmark reaches in rather than widen its API.
  const ports = (node.loop as unknown as { pipeline: { ports: { peers: PeerApi } } }).pipeline.ports;
  const real = ports.peers;
  ports.peers = {
    fetchStatus: async (apiUrl) => statuses.get(apiUrl) ?? null,
    postFailsafe: (apiUrl, body, timeoutMs) => real.postFailsafe(apiUrl, body, timeoutMs),
    fetchEvents: (apiUrl, timeoutMs) => real.fetchEvents(apiUrl, timeoutMs),
  };
}

/** One tick of `node`'s loop, its job (if it started one) run to its end. */
async function tick(node: SimNode): Promise<void> {
  await node.loop.tickOnce();
  await node.loop.jobDone();
}

interface SizeFigures {
  readonly members: number;
  readonly leaderTick: Samples;
  readonly replicaTick: Samples;
  readonly raceTick: Samples;
  readonly memberEvent: Samples;
  readonly decode: Samples;
  readonly document: Samples;
  readonly documentBytes: number;
}

async function measure(members: number): Promise<SizeFigures> {
  const names = Array.from({ length: members }, (_, i) => `node${i + 1}`);
  const sim = new SimCluster({ names, config: { ttl: 30, loop_wait: 10, retry_timeout: 10, synchronous_mode: syncMode, synchronous_node_count: 1 } });
  try {
    sim.startAll();
    await sim.until(() => sim.primary() !== null && [...sim.nodes.values()].every((n) => n.db.isWritable || n.db.isInRecovery), 600_000, `a primary and ${members - 1} replicas`);
    // Every member published its status at least once, the sync key written.
    await sim.advance(30_000);
    const primary = sim.primary()!;
    const replica = [...sim.nodes.values()].find((n) => n !== primary)!;
    const others = [...sim.nodes.values()].filter((n) => n !== primary && n !== replica);
    const statuses = await detach(others);
    peersFromTable(replica, statuses);
    await probeFromCache(primary);
    await probeFromCache(replica);
    const leaderTick = await sample(ticks, () => tick(primary));
    const replicaTick = await sample(ticks, () => tick(replica));
    const raw = sim.store.range('');
    const decode = await sample(ticks, () => parseCluster(raw));
    const cluster = sim.view();
    const document = await sample(ticks, () => JSON.stringify(clusterDocument('bench', cluster)));
    const documentBytes = Buffer.byteLength(JSON.stringify(clusterDocument('bench', cluster)));
    // A leader race: the primary's machine dies, its key is gone; the replica's tick asks every
    // other member for its position and decides, again and again (its key released each time).
    primary.crash();
    await sim.releaseLeaderOf(primary.name);
    const raceTick = await sample(ticks, async () => {
      await sim.releaseLeaderOf(replica.name);
      await replica.loop.tickOnce();
    }, 2);
    // A member's key changes (its agent published a new WAL position): the watch event and
    // what the one agent left in the process does with it (its copy of the view, its status).
    const other = others[0] ?? primary;
    let lsn = 0x2000000;
    const memberEvent = await sample(ticks, async () => {
      const value = JSON.parse(sim.store.peek(`members/${other.name}`)!.value) as Record<string, unknown>;
      await sim.putKey(`members/${other.name}`, JSON.stringify({ ...value, xlog_location: ++lsn }));
      // The watch delivers in a later microtask: the event is handled once the queue is empty.
      await new Promise((resolve) => setImmediate(resolve));
    });
    return { members, leaderTick, replicaTick, raceTick, memberEvent, decode, document, documentBytes };
  } finally {
    sim.shutdown();
  }
}

const results: SizeFigures[] = [];
for (const n of sizes) {
  const f = await measure(n);
  results.push(f);
  progress(`${n} members: leader tick ${summary(f.leaderTick)}; replica tick ${summary(f.replicaTick)}; race tick ${summary(f.raceTick)}; member key event ${summary(f.memberEvent)}; full decode ${summary(f.decode)}; /cluster ${summary(f.document)} (${f.documentBytes} bytes)`);
}

/**
 * A row of figure `what` for `s`: its 95th percentile (runs without a collection) against the
 * goal; the longest run is in the note. A single run may also hold this process's compilation
 * of code that just became hot, or a preemption that fell while V8's helper thread ran.
 */
const row = (members: number, what: string, s: Samples, goal: boolean, extra = ''): Row => ({
  figure: `${members} members: ${what}, p95`,
  value: percentile(clean(s), 95),
  unit: 'ms',
  ...(goal ? { goal: atMost(STRETCH_GOAL_MS) } : {}),
  note: `${summary(s)}${extra}`,
});
const rows: Row[] = results.flatMap((f) => [
  row(f.members, 'one tick as the leader', f.leaderTick, true),
  row(f.members, 'one tick as a replica', f.replicaTick, true),
  row(f.members, `one leader-race tick (asks ${f.members - 1} peers)`, f.raceTick, true),
  row(f.members, "a member's key changed (watch event handled)", f.memberEvent, true),
  row(f.members, 'cluster view decoded from every key', f.decode, false, '; a full read: the watch-fed copy decodes only the keys that changed'),
  row(f.members, '/cluster document serialised', f.document, false, `; ${f.documentBytes} bytes, once per view: the API keeps the bytes until the view changes`),
]);
printTable(`One agent's own work by cluster size (synchronous_mode ${String(syncMode)}; simulated members, computation only)`, rows, machineLine({ ...machineInfo(), codeMode: 'src through tsx' }));
