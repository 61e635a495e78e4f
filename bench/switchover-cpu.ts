/**
 * The agents' own CPU, switchover by switchover: a real 3-node cluster of the compiled agent
 * (ttl 20, loop_wait 2) with the --cpu-bursts probe of `bench:agent-api` loaded into each
 * agent, then N quiet planned switchovers, the primary moved round all three nodes so that
 * each agent takes each role (new primary, demoted primary, replica that follows) several
 * times. For each switchover and agent it prints the longest stretch its main thread ran
 * between two turns of a 1 ms timer and how many stretches were over 2 ms, within the
 * switchover's window (from the request to the next one), and the longest garbage-collection
 * pause in it. The first time a process runs a role's code it runs code V8 has not compiled
 * or seen yet; later switchovers show what the same work costs once it has.
 *
 * `--trace-loop` (root, with perf installed) also has the kernel trace each agent's main thread:
 * how long each turn of its event loop ran on a CPU between two waits for I/O, which is what a
 * request arriving meanwhile waits behind. The timer-based stretch brackets it: a turn whose
 * work straddles the timer counts in two stretches, and a stretch may hold several short turns.
 *
 * `--window S` counts only the first S seconds after each switchover (V8's memory reducer
 * collects some seconds after a burst of allocation). `--age N` makes every agent run N full
 * collections 4 s after each switchover, so code not run since is aged as in an agent that ran
 * for weeks (V8 drops the bytecode of a function not run for five).
 *
 *   node --import tsx bench/switchover-cpu.ts [--switchovers 9] [--gap 8] [--settle 15] [--window S] [--age N] [--trace-loop] [--skip-build] [--node-args="..."]
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { AGENT_NODE_FLAGS } from '../scripts/lib/cluster-runner.js';
import { sleep } from '../scripts/lib/processes.js';
import { api } from '../test/e2e/e2e-cluster.js';
import { DEMO_DCS, startBenchCluster } from './lib/bench-cluster.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { mainMs, readCpuBursts, type CpuStretch, type GcRecord } from './lib/cpu.js';
import { loopTraceUnavailable, monotonicNow, startLoopTrace, type LoopIteration, type LoopTrace } from './lib/loop-trace.js';
import { atMost, fmt, printRuns, printTable, progress, type Row } from './lib/report.js';
import { max } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    switchovers: { type: 'string', default: '9' },
    gap: { type: 'string', default: '8' },
    settle: { type: 'string', default: '15' },
    window: { type: 'string' },
    age: { type: 'string', default: '0' },
    'trace-loop': { type: 'boolean', default: false },
    'skip-build': { type: 'boolean', default: false },
    'node-args': { type: 'string' },
  },
});
const count = Number(values.switchovers);
const gapMs = Number(values.gap) * 1000;
const settleMs = Number(values.settle) * 1000;
const windowMs = values.window === undefined ? Infinity : Number(values.window) * 1000;
const age = Number(values.age);
/** When the agents are told to collect, after each switchover (before the next, outside a `--window` of up to 4 s). */
const AGE_AT_MS = 4000;
if (age > 0 && gapMs <= AGE_AT_MS) throw new Error(`--age needs a --gap over ${AGE_AT_MS / 1000} s`);
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

/** One agent in one switchover's window. */
interface Cell {
  readonly role: string;
  readonly longest: number;
  readonly over2: number;
  /** Stretches over 1 and over 1.5 ms: how near the rest came. */
  readonly over1: number;
  readonly over15: number;
  readonly gcMax: number;
  /** The agent had taken this role in an earlier switchover of the run. */
  readonly repeated: boolean;
  /** With --trace-loop: the longest turn of the event loop on a CPU, ms, and how many turns ran over 2 and over 1.5 ms. */
  readonly turn: { readonly longest: number; readonly over2: number; readonly over15: number } | null;
}

await runBenchmark(async () => {
  if (!values['skip-build']) {
    progress('npm run build (the agents run the compiled code)');
    await promisify(execFile)('npm', ['run', 'build'], { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024 });
  }
  const dir = mkdtempSync(join(tmpdir(), 'warden-bursts-'));
  onCleanup(async () => {
    if (process.env['BENCH_KEEP'] === '1') progress(`kept the probe's records in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  });
  const nodeArgs = values['node-args']?.split(' ').filter(Boolean) ?? AGENT_NODE_FLAGS;
  const probe = `${pathToFileURL(join(repoRoot, 'bench/lib/cpu-bursts-preload.mjs')).href}?dir=${encodeURIComponent(dir)}&age=${age}`;
  const cluster = await startBenchCluster(DEMO_DCS, 'bench', { agentNodeArgs: [...nodeArgs, ...(age > 0 ? ['--expose-gc'] : []), '--import', probe] });
  const names = cluster.runner.layout.nodes.map((n) => n.name);
  let trace: LoopTrace | null = null;
  if (values['trace-loop']) {
    const why = loopTraceUnavailable();
    if (why !== null) throw new Error(`--trace-loop: ${why}`);
    const started = await startLoopTrace(names.map((n) => cluster.runner.agentPid(n)!), join(dir, 'loop-trace.data'));
    onCleanup(async () => started.kill());
    trace = started;
    progress('the kernel traces the agents\' event loops (perf)');
  }
  progress(`settling ${settleMs / 1000} s`);
  await sleep(settleMs);

  const marks: { at: number; leader: string; candidate: string }[] = [];
  let leader = cluster.primary;
  for (let i = 0; i < count; i++) {
    // Round the ring: each agent becomes primary, is demoted, and follows, in turn.
    const candidate = names[(names.indexOf(leader) + 1) % names.length]!;
    marks.push({ at: Date.now(), leader, candidate });
    const t0 = performance.now();
    const r = await api(cluster.runner, leader, 'POST', '/switchover', { leader, candidate });
    progress(`switchover ${i + 1} ${leader} -> ${candidate}: ${r.status} in ${(performance.now() - t0).toFixed(0)} ms`);
    if (r.status !== 200) throw new Error(`switchover ${leader} -> ${candidate} answered ${r.status} ${JSON.stringify(r.body)}`);
    leader = candidate;
    if (age > 0) {
      await sleep(AGE_AT_MS);
      for (const n of names) process.kill(cluster.runner.agentPid(n)!, 'SIGUSR2');
      await sleep(gapMs - AGE_AT_MS);
    } else await sleep(gapMs);
  }
  // The probe writes its records every 5 s.
  await sleep(5500);
  const end = Date.now();
  const records = new Map(names.map((n) => [n, readCpuBursts(join(dir, `${cluster.runner.agentPid(n)}.jsonl`))]));
  const pids = new Map(names.map((n) => [n, cluster.runner.agentPid(n)!]));
  const clock = monotonicNow();
  const turns = trace ? await trace.stop() : null;
  await cluster.stop();
  /** The turns of `name`'s event loop that began in [from, to) (wall clock, ms). */
  const turnsOf = (name: string, from: number, to: number): LoopIteration[] => {
    const toMono = (wallMs: number) => clock.monoUs - (clock.wallMs - wallMs) * 1000;
    return (turns?.get(pids.get(name)!) ?? []).filter((t) => t.startUs >= toMono(from) && t.startUs < toMono(to));
  };

  const seen = new Map(names.map((n) => [n, new Set<string>()]));
  const cells = marks.map((m, i) => {
    const to = Math.min(marks[i + 1]?.at ?? end, m.at + windowMs);
    return names.map((n): Cell => {
      const role = n === m.candidate ? 'promoted' : n === m.leader ? 'demoted' : 'follows';
      const recs = records.get(n)!.filter((r) => r.at >= m.at && r.at < to);
      const bursts = recs.filter((r): r is CpuStretch => r.kind === 'burst').map(mainMs);
      const gcs = recs.filter((r): r is GcRecord => r.kind === 'gc').map((g) => g.ms);
      const repeated = seen.get(n)!.has(role);
      seen.get(n)!.add(role);
      const onCpu = turns ? turnsOf(n, m.at, to).map((t) => t.onCpuUs / 1000) : null;
      const turn = onCpu ? { longest: max([0, ...onCpu]), over2: onCpu.filter((t) => t > 2).length, over15: onCpu.filter((t) => t > 1.5).length } : null;
      return { role, longest: max([0, ...bursts]), over2: bursts.filter((b) => b > 2).length, over1: bursts.filter((b) => b > 1).length, over15: bursts.filter((b) => b > 1.5).length, gcMax: max([0, ...gcs]), repeated, turn };
    });
  });
  printRuns(
    "Each agent's main thread by switchover: longest stretch between two turns of a 1 ms timer, ms (stretches over 2 ms; longest GC pause); * = the agent's first time in that role",
    ['switchover', ...names],
    cells.map((row, i) => [`${i + 1}: ${marks[i]!.leader} -> ${marks[i]!.candidate}`, ...row.map((c) => `${c.role}${c.repeated ? '' : '*'} ${fmt(c.longest)} (${c.over2}; gc ${fmt(c.gcMax)}${c.turn ? `; turn ${fmt(c.turn.longest)}` : ''})`)]),
  );
  const all = cells.flat();
  const first = all.filter((c) => !c.repeated);
  const again = all.filter((c) => c.repeated);
  const rows: Row[] = [
    { figure: "longest stretch, an agent's first switchover in a role", value: max(first.map((c) => c.longest)), unit: 'ms', goal: atMost(2), note: `${first.filter((c) => c.over2 > 0).length} of ${first.length} over 2 ms; ${first.reduce((s, c) => s + c.over2, 0)} stretches over 2 ms in all` },
    { figure: 'longest stretch, a role the agent had taken before', value: max(again.map((c) => c.longest)), unit: 'ms', goal: atMost(2), note: `${again.filter((c) => c.over2 > 0).length} of ${again.length} over 2 ms; ${again.reduce((s, c) => s + c.over2, 0)} stretches over 2 ms in all` },
    {
      figure: 'stretches over 1.5 ms, roles taken before',
      value: again.reduce((s, c) => s + c.over15, 0),
      unit: '',
      note: `${again.reduce((s, c) => s + c.over1, 0)} over 1 ms, in ${again.length} windows`,
    },
    ...(turns ? loopTurnRows(first, again) : []),
    { figure: 'longest garbage-collection pause in any window', value: max(all.map((c) => c.gcMax)), unit: 'ms', note: 'wall time of the pause (perf_hooks), helper threads and waits for a CPU included' },
  ];
  const scope = `${Number.isFinite(windowMs) ? `the first ${windowMs / 1000} s after each switchover` : 'from each switchover to the next'}${age > 0 ? `; ${age} full collections forced between switchovers` : ''}`;
  printTable(`Agents' own CPU by switchover (quiet cluster, no load; ${scope})`, rows);
});

/** The kernel trace's figures: the longest turn of an agent's event loop on a CPU, first times and roles taken before. */
function loopTurnRows(first: readonly Cell[], again: readonly Cell[]): Row[] {
  const row = (figure: string, cells: readonly Cell[]): Row => {
    const t = cells.map((c) => c.turn!);
    return {
      figure,
      value: max(t.map((x) => x.longest)),
      unit: 'ms',
      goal: atMost(2),
      note: `${t.filter((x) => x.over2 > 0).length} of ${t.length} over 2 ms; ${t.reduce((s, x) => s + x.over2, 0)} turns over 2 ms, ${t.reduce((s, x) => s + x.over15, 0)} over 1.5 ms (kernel trace: on a CPU from one wait for I/O to the next)`,
    };
  };
  return [row("longest turn of the event loop, an agent's first switchover in a role", first), row('longest turn of the event loop, a role the agent had taken before', again)];
}
