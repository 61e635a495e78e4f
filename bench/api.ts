/**
 * Throughput and latency of the agent's REST API on a real 3-node cluster, driven with
 * autocannon over keep-alive connections: /primary on the primary, /replica on a replica,
 * and /node, /metrics, /cluster on the primary, at 16 and 64 connections; plus the agents'
 * RSS (VmRSS) idle and the primary agent's peak RSS under load.
 *
 * Two references make the figures readable on a shared machine: a plain node:http server
 * sending a body of the same size (the ceiling of any Node API here, right now), and one
 * replica's agent swapped for a compiled build of the same sources (the checkout's launcher
 * runs the sources through tsx, whose loader thread costs memory), measured idle and under
 * /replica load, with a preloaded probe reporting its V8 heap. `--profile DIR` runs that
 * compiled agent with --cpu-prof into DIR; `--node-args="..."` passes V8/Node flags to it
 * (e.g. --max-semi-space-size=1, to see what a smaller young generation saves). Each line is the best of `--rounds` runs (other
 * work on a shared machine only ever slows a run down); the agent's CPU time per request is
 * measured from /proc/<pid>/stat, a figure that depends far less on that other work.
 *
 *   node --import tsx bench/api.ts [--seconds 5] [--rounds 2] [--connections 16,64] [--idle 10] [--skip-compiled] [--profile DIR] [--node-args="..."]
 */
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { nodeConfigPath } from '../scripts/lib/cluster-layout.js';
import { sleep, spawnDetached, stopPid } from '../scripts/lib/processes.js';
import { startBaselineServer } from './lib/baseline-server.js';
import { DEMO_DCS, othersOf, startBenchCluster } from './lib/bench-cluster.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { compiledCopy } from './lib/compiled-copy.js';
import { loadTest, type LoadResult } from './lib/load.js';
import { atLeast, atMost, below, fmt, printRuns, printTable, progress, type Row } from './lib/report.js';
import { memoryProbe, readMemoryReport, type MemoryReport } from './lib/memory-probe.js';
import { rssSplitMiB } from './lib/rss.js';
import { max } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '16,64' },
    idle: { type: 'string', default: '10' },
    'skip-compiled': { type: 'boolean', default: false },
    profile: { type: 'string' },
    'node-args': { type: 'string', default: '' },
  },
});
const seconds = Number(values.seconds);
const idleMs = Number(values.idle) * 1000;
const connectionCounts = values.connections!.split(',').map(Number);
const rounds = Number(values.rounds);

/** One measured load run and what it ran against. */
type Measured = LoadResult & { readonly path: string; readonly target: string };

await runBenchmark(async () => {
  const build = values['skip-compiled'] ? undefined : compiledCopy();
  build?.catch(() => undefined);
  const { runner, primary } = await startBenchCluster(DEMO_DCS);
  const [replica, swapped] = othersOf(runner, primary) as [string, string];
  const pidOf = (n: string) => {
    const pid = runner.agentPid(n);
    if (pid === undefined) throw new Error(`agent of ${n} is not running`);
    return pid;
  };
  // Let start-up garbage settle, as on a node that has run for a while.
  await sleep(idleMs);
  const idle = Object.fromEntries(runner.layout.nodes.map((n) => [n.name, rssSplitMiB(pidOf(n.name))]));
  progress(`idle RSS: ${Object.entries(idle).map(([n, v]) => `${n} ${fmt(v?.rss ?? Number.NaN)} MiB`).join(', ')}`);

  const results: Measured[] = [];
  const measure = async (path: string, url: string, target: string, pid: number, conns = connectionCounts) => {
    // Warm-up: JIT and connection set-up stay out of the measured run.
    await loadTest(url, conns[0]!, 1);
    for (const c of conns) {
      let r = await loadTest(url, c, seconds, pid);
      for (let i = 1; i < rounds; i++) {
        const again = await loadTest(url, c, seconds, pid);
        if (again.reqPerSec > r.reqPerSec) r = again;
      }
      results.push({ ...r, path, target });
      progress(`${path} on ${target} at ${c} connections: ${r.reqPerSec.toFixed(0)} req/s, p50 ${r.p50} ms, p99 ${r.p99} ms, max ${r.max} ms, non-2xx ${r.non2xx}, errors ${r.errors}`);
    }
  };

  const primaryBody = Buffer.from(await (await fetch(`${runner.apiUrl(primary)}/primary`)).arrayBuffer()).length;
  const baseline = await startBaselineServer(primaryBody);
  await measure('baseline', baseline.url, `node:http, ${primaryBody} B body`, baseline.pid);
  await baseline.stop();
  await measure('/primary', `${runner.apiUrl(primary)}/primary`, `${primary} (primary)`, pidOf(primary));
  await measure('/replica', `${runner.apiUrl(replica)}/replica`, `${replica} (replica)`, pidOf(replica));
  for (const path of ['/node', '/metrics', '/cluster']) await measure(path, `${runner.apiUrl(primary)}${path}`, `${primary} (primary)`, pidOf(primary));
  const loadedPrimary = max(results.filter((r) => r.target.startsWith(primary)).map((r) => r.peakRssMiB ?? Number.NaN));
  const afterLoad = rssSplitMiB(pidOf(primary));

  let compiledIdle: ReturnType<typeof rssSplitMiB>;
  let heap: MemoryReport | undefined;
  if (build) {
    const dir = await build;
    progress(`swapping ${swapped}'s agent for the compiled build in ${dir}`);
    await runner.stopAgent(swapped);
    const probe = memoryProbe(dir);
    const extraArgs = values['node-args']!.split(' ').filter(Boolean);
    const nodeArgs = [...extraArgs, ...probe.nodeArgs, ...(values.profile ? ['--cpu-prof', '--cpu-prof-dir', resolve(values.profile)] : [])];
    const pid = spawnDetached(
      process.execPath,
      [...nodeArgs, join(dir, 'bin', 'warden.js'), '-c', nodeConfigPath(runner.layout, swapped)],
      join(runner.layout.dir, 'logs', `${swapped}-compiled.log`),
      { ...process.env, ...probe.env },
    );
    onCleanup(() => stopPid(pid, 60_000));
    await runner.waitHealthy(180_000);
    await sleep(idleMs);
    compiledIdle = rssSplitMiB(pid);
    heap = await readMemoryReport(pid, probe.reportFile);
    progress(`idle RSS of the compiled agent (${swapped}, replica): ${fmt(compiledIdle?.rss ?? Number.NaN)} MiB`);
    await measure('/replica', `${runner.apiUrl(swapped)}/replica`, `${swapped} (replica, compiled)`, pid, [connectionCounts[0]!]);
    await stopPid(pid, 60_000);
    if (values.profile) progress(`CPU profile of the compiled agent written to ${resolve(values.profile)}`);
  }

  printRuns(
    `agent REST API under load (autocannon, keep-alive, ${seconds} s per line; latencies in ms, 1 ms resolution)`,
    ['path', 'target', 'conns', 'req/s', 'p50', 'p99', 'max', 'non-2xx', 'errors', 'CPU µs/req', 'peak RSS MiB'],
    results.map((r) => [r.path, r.target, r.connections, r.reqPerSec, r.p50, r.p99, r.max, r.non2xx, r.errors + r.timeouts, r.cpuUsPerRequest ?? Number.NaN, r.peakRssMiB ?? Number.NaN]),
  );
  const find = (path: string, c: number, compiled = false) => results.find((r) => r.path === path && r.connections === c && r.target.includes('compiled') === compiled);
  const rows: Row[] = [];
  const base16 = find('baseline', 16);
  const p16 = find('/primary', 16);
  if (p16) {
    rows.push(
      { figure: '/primary @16 conns, throughput', value: p16.reqPerSec, unit: 'req/s', goal: atLeast(15_000), note: base16 ? `plain node:http here: ${fmt(base16.reqPerSec)} req/s` : '' },
      { figure: '/primary @16 conns, p99', value: p16.p99, unit: 'ms', goal: below(5), note: base16 ? `plain node:http here: ${base16.p99} ms` : '' },
      { figure: '/primary @16 conns, non-2xx + errors', value: p16.non2xx + p16.errors + p16.timeouts, unit: '', goal: atMost(0) },
      { figure: '/primary: agent CPU per request', value: p16.cpuUsPerRequest ?? Number.NaN, unit: 'µs', note: 'measured, any machine load' },
      {
        figure: '/primary: req/s one free core could serve',
        value: p16.cpuUsPerRequest ? 1e6 / p16.cpuUsPerRequest : Number.NaN,
        unit: 'req/s',
        goal: atLeast(15_000),
        note: '1 s / CPU per request (estimate)',
      },
    );
  }
  for (const r of results) {
    if (r === p16) continue;
    const cpu = r.cpuUsPerRequest === undefined || r.path === 'baseline' ? '' : `, ${fmt(r.cpuUsPerRequest)} µs CPU/req`;
    rows.push({ figure: `${r.path} @${r.connections} conns${r.target.includes('compiled') ? ', compiled' : ''}`, value: r.reqPerSec, unit: 'req/s', note: `p50 ${r.p50} ms, p99 ${r.p99} ms${cpu}` });
  }
  const split = (s: ReturnType<typeof rssSplitMiB>) => (s ? `private ${fmt(s.anon)} MiB + mapped files ${fmt(s.file)} MiB` : '');
  rows.push(
    { figure: `agent RSS idle, primary ${primary}, tsx`, value: idle[primary]?.rss ?? Number.NaN, unit: 'MiB', goal: atMost(50), note: split(idle[primary]) },
    { figure: `agent RSS idle, replica ${swapped}, tsx`, value: idle[swapped]?.rss ?? Number.NaN, unit: 'MiB', goal: atMost(50), note: split(idle[swapped]) },
  );
  if (build) {
    const flags = values['node-args'] ? ` ${values['node-args']}` : '';
    rows.push({ figure: `agent RSS idle, replica ${swapped}, compiled${flags}`, value: compiledIdle?.rss ?? Number.NaN, unit: 'MiB', goal: atMost(50), note: split(compiledIdle) });
  }
  if (heap) {
    const spaces = Object.entries(heap.spaces)
      .filter(([, v]) => v >= 1)
      .map(([k, v]) => `${k.replace('_space', '')} ${fmt(v)}`)
      .join(', ');
    rows.push(
      { figure: '  compiled: V8 heap committed / used', value: heap.heapTotal, unit: 'MiB', note: `used ${fmt(heap.heapUsed)} MiB; ${spaces}` },
      { figure: '  compiled: external + array buffers', value: heap.external, unit: 'MiB', note: `array buffers ${fmt(heap.arrayBuffers)} MiB; ${heap.threads} threads` },
    );
  }
  rows.push(
    { figure: 'agent RSS under load, primary peak', value: loadedPrimary, unit: 'MiB' },
    { figure: 'agent RSS after load, primary', value: afterLoad?.rss ?? Number.NaN, unit: 'MiB', note: split(afterLoad) },
  );
  printTable('agent REST API', rows);
});
