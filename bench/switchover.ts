/**
 * Planned switchovers on a real 3-node cluster: for each, how long POST /switchover takes to
 * answer, and the write gap: the last commit on the old primary to the first commit on the new
 * one, seen by a writer that commits every 10 ms on each node over kept connections. The gap is
 * split into phases from the agents' logs, PostgreSQL's logs (log_line_prefix `%m`: ms) and an
 * etcd watch on the leader key, to show where the time goes.
 *
 * Candidates: `alternate` switches back and forth between the bootstrap primary and one
 * replica (the third node only ever follows); `rotate` moves the
 * primary round the three nodes, so every switchover also makes a node that was demoted
 * earlier follow a leader on a newer timeline (pg_rewind where its timeline diverged).
 *
 * `--wal-segsize MB` initdb's the cluster with smaller WAL segments: a promotion writes (and
 * fsyncs) the new timeline's whole first segment, 16 MB by default.
 *
 * `--system patroni` measures Patroni (Debian's /usr/bin/patroni) on the same layout, settings,
 * writer and watch; phases taken from Warden's agent log show n/a there.
 *
 * `--profile DIR` runs Warden's agents with `--cpu-prof` (one sample every 250 us) and writes
 * their CPU profiles to DIR when the cluster stops: `bench/lib/profile-summary.ts FILE
 * --stretches 10` then lists the longest stretches the event loop was held.
 *
 *   node --import tsx bench/switchover.ts [--runs 10] [--targets alternate|rotate] [--wal-segsize 1] [--system warden|patroni] [--profile DIR]
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { sleep, waitFor } from '../scripts/lib/processes.js';
import { api, sql } from '../test/e2e/e2e-cluster.js';
import { AGENT_NODE_FLAGS, type ClusterRunner } from '../scripts/lib/cluster-runner.js';
import { DEMO_DCS, leaderKey, othersOf, startBenchCluster } from './lib/bench-cluster.js';
import { wardenLogFiles, type LogFiles } from './lib/log-timeline.js';
import { PatroniCluster } from './lib/patroni-cluster.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { LeaderWatch } from './lib/leader-watch.js';
import { switchoverPhases, PHASES, type PhaseName } from './lib/switchover-phases.js';
import { atMost, printRuns, printTable, progress, type Row } from './lib/report.js';
import { max, median } from './lib/stats.js';
import { CREATE_WRITES_TABLE, SwitchWriter, WRITES_TABLE, wallNow } from './lib/switch-writer.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    targets: { type: 'string', default: 'alternate' },
    'wal-segsize': { type: 'string' },
    system: { type: 'string', default: 'warden' },
    profile: { type: 'string' },
  },
});
const profileDir = values.profile ? resolve(values.profile) : undefined;
const walSegsizeMb = values['wal-segsize'] ? Number(values['wal-segsize']) : undefined;
if (values.system !== 'warden' && values.system !== 'patroni') throw new Error(`--system: expected warden or patroni, got ${values.system}`);
if (values.system === 'patroni' && (walSegsizeMb || profileDir)) throw new Error('--wal-segsize and --profile are for Warden clusters only');

/** The cluster under test: Warden's agents, or Patroni on the same layout. */
interface SystemUnderTest {
  readonly runner: ClusterRunner;
  readonly primary: string;
  readonly logs: LogFiles;
  waitHealthy(timeoutMs: number): Promise<string>;
  status(node: string): Promise<{ readonly role?: string; readonly xlog?: unknown } | undefined>;
}

async function startSystem(): Promise<SystemUnderTest> {
  if (values.system === 'patroni') {
    const { cluster, primary } = await PatroniCluster.start(DEMO_DCS);
    const logs: LogFiles = { agent: (n) => cluster.logFile(n), postgres: (n) => cluster.logFile(n) };
    return { runner: cluster.runner, primary, logs, waitHealthy: (ms) => cluster.waitHealthy(ms), status: (n) => cluster.status(n) };
  }
  const agentNodeArgs = profileDir ? [...AGENT_NODE_FLAGS, '--cpu-prof', '--cpu-prof-interval', '250', '--cpu-prof-dir', profileDir] : undefined;
  const { runner, primary } = await startBenchCluster(DEMO_DCS, 'bench', { ...(walSegsizeMb ? { walSegsizeMb } : {}), ...(agentNodeArgs ? { agentNodeArgs } : {}) });
  return { runner, primary, logs: wardenLogFiles(runner), waitHealthy: (ms) => runner.waitHealthy(ms), status: (n) => runner.nodeStatus(n) };
}
const runs = Number(values.runs);
if (values.targets !== 'alternate' && values.targets !== 'rotate') throw new Error(`--targets: expected alternate or rotate, got ${values.targets}`);

await runBenchmark(async () => {
  const sut = await startSystem();
  const { runner, primary: first } = sut;
  await sql(runner, first, CREATE_WRITES_TABLE);
  const watch = await LeaderWatch.start(runner.layout.etcdClientPort, leaderKey(runner));
  onCleanup(() => watch.close());
  const answers: number[] = [];
  const gaps: number[] = [];
  const candidateMs: number[] = [];
  const exitMs: number[] = [];
  const phases = new Map<PhaseName, number[]>(PHASES.map((p) => [p.name, []]));
  const lines: (string | number)[][] = [];
  let lost = 0;
  let primary = first;
  const partner = othersOf(runner, first)[0]!;
  for (let i = 0; i < runs; i++) {
    // The old primary must be back as a streaming replica before the next switchover.
    primary = await sut.waitHealthy(180_000);
    // A switchover needs a candidate within maximum_lag_on_failover: wait until the replicas
    // replayed what the primary wrote (a base backup ends with a WAL segment switch).
    await waitFor('the replicas to catch up', 30_000, async () => {
      const docs = await Promise.all(runner.layout.nodes.map((n) => sut.status(n.name)));
      const top = Math.max(...docs.map((d) => Number((d?.xlog as { location?: number } | undefined)?.location ?? 0)));
      const replayed = docs.filter((d) => d?.role === 'replica').map((d) => Number((d?.xlog as { replayed_location?: number } | undefined)?.replayed_location ?? 0));
      return replayed.length > 0 && replayed.every((r) => top - r < 1024 * 1024) ? true : undefined;
    }, 200);
    const names = runner.layout.nodes.map((n) => n.name);
    const candidate = values.targets === 'rotate' ? names[(names.indexOf(primary) + 1) % names.length]! : primary === first ? partner : first;
    const writer = new SwitchWriter(runner, 10);
    writer.start();
    await sleep(1000);
    const t0 = wallNow();
    const r = await api(runner, primary, 'POST', '/switchover', { leader: primary, candidate });
    const answerMs = wallNow() - t0;
    if (r.status !== 200) {
      await writer.stop();
      throw new Error(`switchover ${i + 1} ${primary} -> ${candidate}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    }
    await waitFor('the new primary to take 20 writes', 30_000, async () => (writer.commits.filter((c) => c.node === candidate && c.at >= t0).length >= 20 ? true : undefined), 50);
    await writer.stop();
    const acked = writer.acknowledged;
    const stored = await sql(runner, candidate, `SELECT count(*)::int AS n FROM ${WRITES_TABLE} WHERE id = ANY($1)`, [acked]);
    lost += acked.length - stored.rows[0].n;
    // Let the logs reach the disk.
    await sleep(300);
    const p = switchoverPhases({ logs: sut.logs, watch, writer, oldPrimary: primary, candidate, t0, until: wallNow() });
    for (const ph of PHASES) phases.get(ph.name)!.push(p.phases[ph.name]);
    answers.push(answerMs);
    gaps.push(p.writeGap);
    candidateMs.push(p.candidate);
    exitMs.push(p.exit);
    lines.push([i + 1, `${primary} -> ${candidate}`, answerMs, p.writeGap, ...PHASES.map((ph) => p.phases[ph.name])]);
    progress(`switchover ${i + 1}/${runs} ${primary} -> ${candidate}: answered in ${answerMs.toFixed(0)} ms, write gap ${p.writeGap.toFixed(0)} ms`);
    primary = candidate;
  }
  printRuns(
    'switchover: one line per run (ms); the phases add up from POST to the first commit on the new primary',
    ['run', 'from -> to', 'API answer', 'write gap', ...PHASES.map((p) => p.short)],
    lines,
  );
  const cfg = `${values.system}, ttl ${DEMO_DCS['ttl']} / loop_wait ${DEMO_DCS['loop_wait']}, ${runs} runs, ${values.targets}, WAL segments of ${walSegsizeMb ?? 16} MB`;
  const phaseRows: Row[] = PHASES.map((ph) => ({ figure: `  ${ph.short}, median (max)`, value: median(phases.get(ph.name)!), unit: 'ms', note: `${fmtMax(phases.get(ph.name)!)}; ${ph.what}` }));
  printTable('switchover (POST /switchover, writer committing every 10 ms on each node)', [
    { figure: 'API answer, median', value: median(answers), unit: 'ms', goal: atMost(1000), note: cfg },
    { figure: 'API answer, max', value: max(answers), unit: 'ms', goal: atMost(1000) },
    { figure: 'write gap, median', value: median(gaps), unit: 'ms', goal: atMost(300), note: 'last commit on the old primary -> first commit on the new' },
    { figure: 'write gap, max', value: max(gaps), unit: 'ms' },
    ...phaseRows,
    { figure: '  key released -> promote request, median', value: median(candidateMs), unit: 'ms', note: `${fmtMax(candidateMs)}; the candidate's whole reaction (notices + acts)` },
    { figure: '  (old primary: shutdown checkpoint -> exited), median', value: median(exitMs), unit: 'ms', note: `${fmtMax(exitMs)}; WAL senders' hand-over and exit, overlapping the phases after it` },
    { figure: 'acknowledged writes lost', value: lost, unit: '', goal: atMost(0) },
  ]);
});

function fmtMax(xs: readonly number[]): string {
  const m = max(xs);
  return Number.isFinite(m) ? `max ${Math.round(m)}` : 'max n/a';
}
