/**
 * Planned switchovers on a real 3-node cluster: for each, how long POST /switchover takes to
 * answer, and the write gap seen by a client committing every 10 ms (last acknowledged write
 * on the old primary to the first on the new one). The leader key's release and take-over
 * (watched in etcd) and the first write on the candidate (probed every 10 ms) split the gap
 * into phases, to show where the time goes.
 *
 * Candidates: `alternate` switches back and forth between the bootstrap primary and one
 * replica (the third node only ever follows); `rotate` moves the
 * primary round the three nodes, so every switchover also makes a node that was demoted
 * earlier follow a leader on a newer timeline (pg_rewind where its timeline diverged).
 *
 *   node --import tsx bench/switchover.ts [--runs 10] [--targets alternate|rotate]
 */
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { sleep, waitFor } from '../scripts/lib/processes.js';
import { api, sql, Writer } from '../test/e2e/e2e-cluster.js';
import { DEMO_DCS, leaderKey, othersOf, startBenchCluster } from './lib/bench-cluster.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { LeaderWatch } from './lib/leader-watch.js';
import { atMost, printRuns, printTable, progress } from './lib/report.js';
import { max, median } from './lib/stats.js';
import { CREATE_PROBE_TABLE, firstWritable } from './lib/writable-probe.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '10' }, targets: { type: 'string', default: 'alternate' } } });
const runs = Number(values.runs);
if (values.targets !== 'alternate' && values.targets !== 'rotate') throw new Error(`--targets: expected alternate or rotate, got ${values.targets}`);

/** Milliseconds from `a` to `b`, NaN when either is unknown. */
const span = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? Number.NaN : b - a);

await runBenchmark(async () => {
  const { runner, primary: first } = await startBenchCluster(DEMO_DCS);
  await sql(runner, first, 'CREATE TABLE IF NOT EXISTS e2e_writes (id bigint PRIMARY KEY, at timestamptz DEFAULT now())');
  await sql(runner, first, CREATE_PROBE_TABLE);
  const watch = await LeaderWatch.start(runner.layout.etcdClientPort, leaderKey(runner));
  onCleanup(() => watch.close());
  const answers: number[] = [];
  const gaps: number[] = [];
  const phases = { release: [] as number[], takeOver: [] as number[], promote: [] as number[] };
  const lines: (string | number)[][] = [];
  let lost = 0;
  let primary = first;
  const partner = othersOf(runner, first)[0]!;
  for (let i = 0; i < runs; i++) {
    // The old primary must be back as a streaming replica before the next switchover.
    primary = await runner.waitHealthy(180_000);
    // A switchover needs a candidate within maximum_lag_on_failover: wait until the replicas
    // replayed what the primary wrote (a base backup ends with a WAL segment switch).
    await waitFor('the replicas to catch up', 30_000, async () => {
      const docs = await Promise.all(runner.layout.nodes.map((n) => runner.nodeStatus(n.name)));
      const top = Math.max(...docs.map((d) => Number((d?.xlog as { location?: number } | undefined)?.location ?? 0)));
      const replayed = docs.filter((d) => d?.role === 'replica').map((d) => Number((d?.xlog as { replayed_location?: number } | undefined)?.replayed_location ?? 0));
      return replayed.length > 0 && replayed.every((r) => top - r < 1024 * 1024) ? true : undefined;
    }, 200);
    const names = runner.layout.nodes.map((n) => n.name);
    const candidate = values.targets === 'rotate' ? names[(names.indexOf(primary) + 1) % names.length]! : primary === first ? partner : first;
    // Every Writer numbers its rows from 1.
    await sql(runner, primary, 'TRUNCATE e2e_writes');
    const writer = new Writer(runner, 10);
    writer.start();
    await sleep(1000);
    // Only the gap around the switchover counts, not the writer's first connection.
    writer.maxGapMs = 0;
    const t0 = performance.now();
    const writable = firstWritable(runner, [candidate], 60_000);
    const r = await api(runner, primary, 'POST', '/switchover', { leader: primary, candidate });
    const answerMs = performance.now() - t0;
    if (r.status !== 200) {
      await writer.stop();
      throw new Error(`switchover ${i + 1} ${primary} -> ${candidate}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    }
    const firstWrite = await writable;
    const acksBefore = writer.acknowledged.length;
    await waitFor('the writer to commit again', 30_000, async () => (writer.acknowledged.length > acksBefore + 20 ? true : undefined), 50);
    await writer.stop();
    const stored = await sql(runner, candidate, 'SELECT count(*)::int AS n FROM e2e_writes WHERE id = ANY($1)', [writer.acknowledged]);
    lost += writer.acknowledged.length - stored.rows[0].n;
    const released = watch.firstAfter(t0, 'delete')?.at;
    const acquired = watch.firstAfter(t0, 'put', candidate)?.at;
    const p = { release: span(t0, released), takeOver: span(released, acquired), promote: span(acquired, firstWrite.at) };
    phases.release.push(p.release);
    phases.takeOver.push(p.takeOver);
    phases.promote.push(p.promote);
    answers.push(answerMs);
    gaps.push(writer.maxGapMs);
    lines.push([i + 1, `${primary} -> ${candidate}`, answerMs, writer.maxGapMs, p.release, p.takeOver, p.promote]);
    progress(`switchover ${i + 1}/${runs} ${primary} -> ${candidate}: answered in ${answerMs.toFixed(0)} ms, write gap ${writer.maxGapMs} ms`);
    primary = candidate;
  }
  printRuns(
    'switchover: one line per run (ms); phases: POST -> leader key released, released -> taken by the candidate, taken -> first write on the candidate',
    ['run', 'from -> to', 'API answer', 'write gap', 'POST->released', 'released->taken', 'taken->writable'],
    lines,
  );
  const cfg = `ttl ${DEMO_DCS['ttl']} / loop_wait ${DEMO_DCS['loop_wait']}, ${runs} runs, ${values.targets}`;
  printTable('switchover (POST /switchover, writer committing every 10 ms)', [
    { figure: 'API answer, median', value: median(answers), unit: 'ms', goal: atMost(1000), note: cfg },
    { figure: 'API answer, max', value: max(answers), unit: 'ms', goal: atMost(1000) },
    { figure: 'write gap, median', value: median(gaps), unit: 'ms', goal: atMost(500) },
    { figure: 'write gap, max', value: max(gaps), unit: 'ms', goal: atMost(500) },
    { figure: 'phase POST -> key released, median', value: median(phases.release), unit: 'ms', note: 'old primary: checkpoint, stop, release' },
    { figure: 'phase released -> taken, median', value: median(phases.takeOver), unit: 'ms', note: 'candidate wakes on the watch' },
    { figure: 'phase taken -> writable, median', value: median(phases.promote), unit: 'ms', note: 'candidate: promote' },
    { figure: 'acknowledged writes lost', value: lost, unit: '', goal: atMost(0) },
  ]);
});
