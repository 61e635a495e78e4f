/**
 * Availability exploration: how long a simulated cluster goes without a primary after an
 * operator's switchover, or after its primary is lost, with a second fault at a random moment.
 *   npx tsx test/sim/explore.ts --kind switchover|failover [--runs 500] [--seed 1 | --random] [--recover]
 *   npx tsx test/sim/explore.ts --kind ... --replay SEED [--recover] [--verbose]
 * Prints the slowest runs and every run that got no primary within 3 minutes, one line each
 * with what was drawn, for a developer to read: it gives no verdict. Some long waits are the
 * rules' own (a frozen leader holds its lock for ttl; a sync key that names only a primary that
 * died may not be overridden), others are defects (two members each leaving the race to the
 * other). `--recover` heals every fault 1-30 s after it (agents restarted, links back), as
 * an operator's systemd would; without it, the faulted nodes stay down.
 */
import { failoverToJson } from '../../src/adapters/cluster-store/codec.js';
import { Random } from './random.js';
import { healthyCluster, primaryName } from '../unit/app/agent/scenarios/helpers.js';
import type { SimCluster, SimNode } from './sim-cluster.js';
import { traceTicks } from './trace.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** The faults one node can get; `none` leaves it alone. */
const FAULTS = ['none', 'crash', 'kill', 'freeze', 'stop', 'dcs', 'cut', 'dbCrash', 'slowPromote'] as const;
type Fault = (typeof FAULTS)[number];

function inflict(node: SimNode, fault: Fault): void {
  switch (fault) {
    case 'crash': return node.crash();
    case 'kill': return node.killAgent();
    case 'freeze': return node.freezeAgent();
    case 'stop': return node.stopAgent();
    case 'dcs': return node.setDcsLink(false);
    case 'cut': return node.setCutOff(true);
    case 'dbCrash': return node.db.crash();
    case 'slowPromote': return node.db.setDelay('promote', 8000);
    case 'none': return;
  }
}

function healAll(sim: SimCluster): void {
  for (const node of sim.nodes.values()) {
    node.setCutOff(false);
    node.setDcsLink(true);
    node.thawAgent();
    node.db.clearFaults();
    if (!node.alive) node.startAgent();
  }
}

/** One drawn run: the milliseconds until a primary (null: none within 3 minutes) and what was drawn. */
async function explore(seed: number, kind: 'switchover' | 'failover', recover: boolean, trace: boolean): Promise<{ ms: number | null; drawn: string }> {
  const rnd = new Random(seed);
  const mode = rnd.pick([false, true, 'quorum'] as const);
  const loopWait = rnd.pick([2, 10]);
  const names = rnd.chance(0.65) ? ['node1', 'node2', 'node3'] : ['node1', 'node2', 'node3', 'node4'];
  const failsafe = rnd.chance(0.3);
  const config = { ttl: 20, loop_wait: loopWait, retry_timeout: Math.min(loopWait, 5), synchronous_mode: mode, failsafe_mode: failsafe, ...(rnd.chance(0.3) ? { synchronous_node_count: 2 } : {}) };
  const sim = await healthyCluster({ names, config });
  try {
    // Replicas that stay some WAL behind (as under load), and writes in flight.
    const lags: string[] = [];
    for (const n of names.slice(1)) {
      if (!rnd.chance(0.4)) continue;
      const bytes = rnd.int(100, 5000);
      sim.node(n).db.setReplicationLag(bytes);
      lags.push(`${n}:${bytes}`);
    }
    for (let w = rnd.int(1, 10); w > 0; w--) void sim.node('node1').db.write(1024).catch(() => undefined);
    await sim.advance(rnd.int(0, 3) * 1000);
    const candidate = kind === 'switchover' && rnd.chance(0.7) ? rnd.pick(names.slice(1)) : null;
    const first: Fault = kind === 'failover' ? rnd.pick(FAULTS.filter((f) => f !== 'none' && f !== 'slowPromote')) : 'none';
    const second = rnd.pick(FAULTS);
    const victim = rnd.pick(kind === 'switchover' ? names : names.slice(1));
    const at = rnd.int(0, kind === 'switchover' ? 600 : 25_000);
    const catchUp = rnd.chance(0.5);
    const healAfter = at + rnd.int(1, 30) * 1000;
    const drawn = `seed ${seed}: mode ${String(mode)}, loop_wait ${loopWait}, ${names.length} nodes${failsafe ? ', failsafe' : ''}, lag [${lags.join(' ')}]${catchUp ? ' then caught up' : ''}; ` +
      `${kind === 'switchover' ? `switchover to ${candidate ?? 'any'}` : `primary ${first}`}; ${second} on ${victim} at ${at} ms${recover ? `; healed at ${healAfter} ms` : ''}`;
    if (trace) traceTicks();
    const start = sim.clock.now();
    if (kind === 'switchover') await sim.putKey('failover', failoverToJson({ leader: 'node1', member: candidate, scheduledAt: null }));
    else inflict(sim.node('node1'), first);
    if (catchUp) for (const n of names) sim.node(n).db.setReplicationLag(0);
    void sim.clock.sleep(at).then(() => inflict(sim.node(victim), second));
    let healed = false;
    if (recover) void sim.clock.sleep(healAfter).then(() => ((healed = true), healAll(sim)));
    // A switchover is over once a primary runs and the key is consumed (the old one taking it back counts); a
    // failover, once another member is primary, or the old one once healed or where its fault leaves it the
    // lock (its server alone crashed and started again; cut from the other nodes only, it still reaches etcd).
    const keepsLock = first === 'dbCrash' || first === 'cut';
    const done = (): boolean => {
      const p = primaryName(sim);
      if (p === null) return false;
      return kind === 'switchover' ? p !== 'node1' || sim.view().failover === null : p !== 'node1' || healed || (keepsLock && sim.clock.now() > start);
    };
    const ms = await sim.until(done, 180_000, 'a primary').then(() => sim.clock.now() - start, () => null);
    return { ms, drawn: `${drawn} -> ${primaryName(sim) ?? 'no primary'}` };
  } finally {
    sim.shutdown();
  }
}

async function main(): Promise<void> {
  const kind = arg('kind') === 'failover' ? 'failover' : 'switchover';
  const recover = process.argv.includes('--recover');
  const replay = arg('replay');
  if (replay !== undefined) {
    const r = await explore(Number(replay), kind, recover, process.argv.includes('--verbose'));
    console.log(`${r.ms === null ? 'no primary within 180 s' : `${r.ms} ms`}  ${r.drawn}`);
    return;
  }
  const runs = Number(arg('runs') ?? 500);
  const first = process.argv.includes('--random') ? 1_000_000 + Math.floor(Math.random() * 2_000_000_000) : Number(arg('seed') ?? 1);
  console.log(`${kind} exploration, seeds ${first}..${first + runs - 1}${recover ? ', faults healed' : ''}`);
  const results: { ms: number | null; drawn: string }[] = [];
  for (let i = 0; i < runs; i++) results.push(await explore(first + i, kind, recover, false));
  const stuck = results.filter((r) => r.ms === null);
  const timed = results.filter((r) => r.ms !== null).sort((a, b) => b.ms! - a.ms!);
  const median = timed.length ? timed[Math.floor(timed.length / 2)]!.ms : null;
  console.log(`${runs} runs: ${stuck.length} without a primary within 180 s; time to a primary median ${median} ms, max ${timed[0]?.ms ?? '-'} ms`);
  for (const r of stuck) console.log(`  no primary  ${r.drawn}`);
  for (const r of timed.slice(0, Number(arg('slowest') ?? 25))) console.log(`  ${String(r.ms).padStart(8)} ms  ${r.drawn}`);
}

await main();
