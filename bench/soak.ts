/**
 * The agents' memory over a long run: does private memory settle, or climb? A 3-node cluster
 * (the demo's timings) serves a keep-alive load on one agent for `--minutes`, every read
 * endpoint in turn (health checks, /node, /cluster, /history, /config, /metrics), while the
 * primary moves round the three nodes every `--switchover-every` seconds, so the loaded agent
 * serves in every role and every agent promotes, demotes and follows again and again. Every
 * `--sample-every` seconds each agent's private memory (RssAnon of /proc/<pid>/status) and its
 * V8 heap (committed and used, from its own /metrics) are read.
 *
 * A heap that fragments shows here as committed heap and private memory that climb while the
 * used heap does not: with `--no-compact` V8 frees empty pages but no longer moves live
 * objects out of half-empty ones. `--compare` runs a second cluster beside the first, the same
 * load and schedule, with the launcher's flags plus `--no-compact`; `--node-args="..."`, given
 * once or more, runs one cluster per value with those node flags instead.
 *
 * Prints, per agent: private memory after the first minutes, at the middle and at the end,
 * its range and its least-squares slope over the second half (MiB per hour), and the heap
 * committed and used at the end. `--heap-snapshots` also has every agent write a heap
 * snapshot (V8 collects first: live objects only) a third of the way in and a minute before
 * the end, both under the load, and prints what grew between them by constructor: a leak
 * shows as a kind that grows with the switchovers. Writing a snapshot leaves tens of MiB in
 * the agent's malloc, so memory is then sampled only until the first one.
 *
 *   node --import tsx bench/soak.ts [--minutes 40] [--switchover-every 60] [--sample-every 30] [--connections 8] [--compare | --node-args="..." ...] [--heap-snapshots] [--skip-build]
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { AGENT_NODE_FLAGS } from '../scripts/lib/cluster-runner.js';
import type { ClusterRunner } from '../scripts/lib/cluster-runner.js';
import { sleep, waitFor } from '../scripts/lib/processes.js';
import { DEMO_DCS, startBenchCluster } from './lib/bench-cluster.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { H2LOAD, h2loadInstalled, h2loadSummary } from './lib/h2load.js';
import { heapGrowth, heapKinds, type HeapKind } from './lib/heap-summary.js';
import { fmt, printRuns, progress } from './lib/report.js';
import { rssSplitMiB } from './lib/rss.js';
import { mean } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '40' },
    'switchover-every': { type: 'string', default: '60' },
    'sample-every': { type: 'string', default: '30' },
    connections: { type: 'string', default: '8' },
    compare: { type: 'boolean', default: false },
    'node-args': { type: 'string', multiple: true },
    'heap-snapshots': { type: 'boolean', default: false },
    'skip-build': { type: 'boolean', default: false },
  },
});
const soakMs = Number(values.minutes) * 60_000;
const switchoverEveryMs = Number(values['switchover-every']) * 1000;
const sampleEveryMs = Number(values['sample-every']) * 1000;
const connections = Number(values.connections);
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
/** What the load asks for, in turn, on every connection. */
const PATHS = ['/primary', '/replica', '/health', '/node', '/cluster', '/history', '/config', '/metrics'];

/** One agent's figures at one moment. */
interface Sample {
  /** Since the load began, s. */
  readonly atS: number;
  /** Private memory (RssAnon), MiB. */
  readonly anon: number;
  /** V8 heap committed and used, MiB (from the agent's /metrics). */
  readonly heapTotal: number;
  readonly heapUsed: number;
}

/** A cluster under soak: which V8 setting its agents run with, and what was read off them. */
interface Soaked {
  readonly label: string;
  readonly runner: ClusterRunner;
  readonly loaded: string;
  primary: string;
  readonly samples: Map<string, Sample[]>;
  switchovers: number;
  readonly failedSwitchovers: string[];
  load?: ChildProcess;
  loadOutput: string;
  /** With --heap-snapshots: where the agents write them, and each agent's live objects at the two moments. */
  readonly snapshotDir?: string;
  readonly heaps: Map<string, Map<string, HeapKind>[]>;
}

/** The agent's V8 heap committed and used, MiB, from its /metrics; undefined when it does not answer. */
async function heapMiB(runner: ClusterRunner, name: string): Promise<{ total: number; used: number } | undefined> {
  try {
    const r = await fetch(`${runner.apiUrl(name)}/metrics`, { signal: AbortSignal.timeout(5000) });
    const text = await r.text();
    const read = (metric: string) => Number(new RegExp(`^${metric} (\\S+)$`, 'm').exec(text)?.[1]) / 1048576;
    return { total: read('nodejs_heap_size_total_bytes'), used: read('nodejs_heap_size_used_bytes') };
  } catch {
    return undefined;
  }
}

async function sample(c: Soaked, atS: number): Promise<void> {
  for (const n of c.runner.layout.nodes.map((x) => x.name)) {
    const pid = c.runner.agentPid(n);
    const mem = pid === undefined ? undefined : rssSplitMiB(pid);
    const heap = await heapMiB(c.runner, n);
    if (mem && heap) c.samples.get(n)!.push({ atS, anon: mem.anon, heapTotal: heap.total, heapUsed: heap.used });
  }
}

/**
 * POST /switchover from the current primary to the next node in turn. A refusal or a failure
 * is kept, the primary is read again from /cluster (a timed-out request may still have moved
 * it), and the next period tries again.
 */
async function switchover(c: Soaked): Promise<void> {
  const names = c.runner.layout.nodes.map((n) => n.name);
  const candidate = names[(names.indexOf(c.primary) + 1) % names.length]!;
  const t0 = performance.now();
  try {
    const r = await fetch(`${c.runner.apiUrl(c.primary)}/switchover`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ leader: c.primary, candidate }),
      signal: AbortSignal.timeout(60_000),
    });
    const body = await r.text();
    if (r.status === 200) {
      c.primary = candidate;
      c.switchovers++;
      progress(`${c.label}: switchover -> ${candidate}: ${r.status} in ${(performance.now() - t0).toFixed(0)} ms`);
      return;
    }
    c.failedSwitchovers.push(`${r.status} ${body.slice(0, 120)}`);
  } catch (e) {
    c.failedSwitchovers.push((e as Error).message);
  }
  progress(`${c.label}: switchover -> ${candidate} failed: ${c.failedSwitchovers.at(-1)}`);
  const leader = (await c.runner.clusterDocument())?.members.find((m) => m.role === 'leader')?.name;
  if (leader !== undefined) c.primary = leader;
}

/** h2load over the whole soak on the loaded agent, every path in turn; stopped by PID at the end. */
function startLoad(c: Soaked, seconds: number): void {
  const urls = PATHS.map((p) => `${c.runner.apiUrl(c.loaded)}${p}`);
  const child = spawn(H2LOAD, ['--h1', '-t1', `-c${connections}`, `-D${seconds}`, ...urls], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d: Buffer) => (c.loadOutput += d.toString()));
  child.stderr!.on('data', () => undefined);
  c.load = child;
  onCleanup(() => {
    if (child.exitCode === null && child.pid !== undefined) process.kill(child.pid, 'SIGTERM');
  });
}

/**
 * Has every agent of `c` write a heap snapshot (SIGUSR2, the agents run with
 * --heapsnapshot-signal) and keeps its live objects by kind. One at a time: writing one holds
 * that agent's event loop a second or two.
 */
async function snapshotHeaps(c: Soaked): Promise<void> {
  for (const n of c.runner.layout.nodes.map((x) => x.name)) {
    const pid = c.runner.agentPid(n);
    if (pid === undefined || !c.snapshotDir) continue;
    const mine = () => readdirSync(c.snapshotDir!).filter((f) => f.includes(`.${pid}.`) && f.endsWith('.heapsnapshot'));
    const known = new Set(mine());
    process.kill(pid, 'SIGUSR2');
    const file = await waitFor(`${n}'s heap snapshot`, 120_000, async () => {
      const f = mine().find((x) => !known.has(x));
      if (f === undefined) return undefined;
      // Written in pieces: done once its size holds still and it parses.
      const size = statSync(join(c.snapshotDir!, f)).size;
      await sleep(500);
      if (statSync(join(c.snapshotDir!, f)).size !== size) return undefined;
      try {
        return { f, kinds: heapKinds(readFileSync(join(c.snapshotDir!, f), 'utf8')) };
      } catch {
        return undefined;
      }
    }, 500);
    rmSync(join(c.snapshotDir, file.f));
    c.heaps.get(n)!.push(file.kinds);
  }
}

/** Least-squares slope of `ys` over `xs`, per unit of x. */
function slope(xs: readonly number[], ys: readonly number[]): number {
  const mx = mean(xs);
  const my = mean(ys);
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

/** The sample nearest `atS`. */
const nearest = (xs: readonly Sample[], atS: number): Sample | undefined => xs.reduce<Sample | undefined>((best, s) => (best === undefined || Math.abs(s.atS - atS) < Math.abs(best.atS - atS) ? s : best), undefined);

/**
 * The figures. `memoryS`: how long memory was sampled, the whole soak unless heap snapshots
 * were taken (writing one leaves tens of MiB in the agent's malloc, so sampling stops there).
 */
function report(clusters: readonly Soaked[], soakS: number, memoryS: number): void {
  const head = ['cluster, agent', `private memory at ${fmt(Math.min(300, memoryS / 4) / 60)} min`, `at ${fmt(memoryS / 120)} min`, `at ${fmt(memoryS / 60)} min${memoryS < soakS ? ' (first heap snapshot)' : ' (the end)'}`, 'second half: min-max', 'second half: slope', `V8 heap at ${fmt(memoryS / 60)} min: committed / used`];
  const rows: (string | number)[][] = [];
  for (const c of clusters) {
    for (const [name, xs] of c.samples) {
      if (!xs.length) continue;
      const second = xs.filter((s) => s.atS >= memoryS / 2);
      const last = xs.at(-1)!;
      const mib = (s: Sample | undefined) => (s ? `${fmt(s.anon)} MiB` : '-');
      rows.push([
        `${c.label}, ${name}${name === c.loaded ? ' (loaded)' : ''}`,
        mib(nearest(xs, Math.min(300, memoryS / 4))),
        mib(nearest(xs, memoryS / 2)),
        mib(last),
        second.length ? `${fmt(Math.min(...second.map((s) => s.anon)))}-${fmt(Math.max(...second.map((s) => s.anon)))} MiB` : '-',
        second.length > 2 ? `${fmt(slope(second.map((s) => s.atS / 3600), second.map((s) => s.anon)))} MiB/h` : '-',
        `${fmt(last.heapTotal)} / ${fmt(last.heapUsed)} MiB`,
      ]);
    }
  }
  printRuns(`Agents' private memory (RssAnon) over ${memoryS < soakS ? `the first ${fmt(memoryS / 60)} min of ` : ''}a ${fmt(soakS / 60)}-minute soak: load on one agent, a switchover every ${fmt(switchoverEveryMs / 1000)} s`, head, rows);
  const loadRows = clusters.map((c) => {
    let h: ReturnType<typeof h2loadSummary> | undefined;
    try {
      h = h2loadSummary(c.loadOutput);
    } catch {
      h = undefined;
    }
    return [c.label, h ? h.total : '-', h ? h.reqPerSec : '-', h ? `${h.errored} / ${h.timeout}` : '-', `${c.switchovers}`, c.failedSwitchovers.length ? `${c.failedSwitchovers.length}: ${c.failedSwitchovers.slice(0, 2).join('; ')}` : '0'];
  });
  if (clusters.some((c) => [...c.heaps.values()].some((h) => h.length === 2))) {
    const kib = (b: number) => `${fmt(b / 1024)} KiB`;
    const apartS = (soakS * 2) / 3 - 60;
    const growthRows: (string | number)[][] = [];
    for (const c of clusters) {
      for (const [name, [before, after]] of c.heaps) {
        if (!before || !after) continue;
        const g = heapGrowth(before, after, 5);
        growthRows.push([
          `${c.label}, ${name}${name === c.loaded ? ' (loaded)' : ''}`,
          `${fmt(g.totalBefore / 1048576)} -> ${fmt(g.totalAfter / 1048576)} MiB`,
          g.grew.map((x) => `${x.kind} ${x.before.count} -> ${x.after.count} (+${kib(x.after.bytes - x.before.bytes)})`).join('; ') || '-',
        ]);
      }
    }
    printRuns(`Live heap (heap snapshots, a third of the way in and a minute before the end, ${fmt(apartS / 60)} min and ~${Math.round((apartS * 1000) / switchoverEveryMs)} switchovers apart): what grew most`, ['cluster, agent', 'live heap', 'grew most: kind, objects before -> after (bytes added)'], growthRows);
  }
  printRuns(`The load (${connections} keep-alive connections, ${PATHS.join(' ')} in turn; answers of 503 from a health check of the other role are expected) and the switchovers`, ['cluster', 'requests', 'req/s', 'errored / timed out', 'switchovers', 'refused or failed'], loadRows);
}

await runBenchmark(async () => {
  if (!h2loadInstalled()) throw new Error(`h2load not found at ${H2LOAD} (Debian package nghttp2-client; scripts/setup.sh --bench installs it)`);
  if (!values['skip-build']) {
    progress('npm run build (the agents run the compiled code)');
    await promisify(execFile)('npm', ['run', 'build'], { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024 });
  }
  const settings = values['node-args']?.length
    ? values['node-args'].map((a) => ({ label: 'node', args: a.split(' ').filter(Boolean) }))
    : [{ label: 'launcher flags', args: AGENT_NODE_FLAGS }, ...(values.compare ? [{ label: 'without compaction', args: [...AGENT_NODE_FLAGS, '--no-compact'] }] : [])];
  const clusters: Soaked[] = [];
  for (const [i, s] of settings.entries()) {
    const snapshotDir = values['heap-snapshots'] ? mkdtempSync(join(tmpdir(), 'warden-soak-heap-')) : undefined;
    if (snapshotDir) onCleanup(() => rmSync(snapshotDir, { recursive: true, force: true }));
    const extra = snapshotDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshotDir}`] : [];
    const cluster = await startBenchCluster(DEMO_DCS, `soak${i}`, { agentNodeArgs: [...s.args, ...extra] });
    const names = cluster.runner.layout.nodes.map((n) => n.name);
    clusters.push({
      label: `${s.label} (${s.args.join(' ')})`,
      runner: cluster.runner,
      loaded: names.find((n) => n !== cluster.primary)!,
      primary: cluster.primary,
      samples: new Map(names.map((n) => [n, []])),
      switchovers: 0,
      failedSwitchovers: [],
      loadOutput: '',
      ...(snapshotDir ? { snapshotDir } : {}),
      heaps: new Map(names.map((n) => [n, []])),
    });
  }
  const soakS = soakMs / 1000;
  const t0 = performance.now();
  const elapsedS = () => (performance.now() - t0) / 1000;
  for (const c of clusters) startLoad(c, soakS);
  progress(`load on ${clusters.map((c) => `${c.loaded} of ${c.label}`).join(' and ')} for ${fmt(soakS / 60)} min`);
  let nextSwitchover = switchoverEveryMs;
  let nextSample = 0;
  let nextReport = 300_000;
  let memoryS = soakS;
  const snapshotsAt = values['heap-snapshots'] ? [soakMs / 3, soakMs - 60_000] : [];
  while (elapsedS() * 1000 < soakMs) {
    const now = elapsedS() * 1000;
    if (now >= nextSample && elapsedS() < memoryS) {
      for (const c of clusters) await sample(c, elapsedS());
      nextSample += sampleEveryMs;
    }
    if (now >= nextSwitchover) {
      await Promise.all(clusters.map((c) => switchover(c)));
      nextSwitchover += switchoverEveryMs;
    }
    if (snapshotsAt.length && now >= snapshotsAt[0]!) {
      snapshotsAt.shift();
      if (memoryS === soakS) {
        for (const c of clusters) await sample(c, elapsedS());
        memoryS = elapsedS();
      }
      for (const c of clusters) await snapshotHeaps(c);
      progress(`heap snapshots taken at ${fmt(elapsedS() / 60)} min`);
    }
    if (now >= nextReport && elapsedS() < memoryS) {
      for (const c of clusters) progress(`${c.label}: private memory ${[...c.samples].map(([n, xs]) => `${n} ${fmt(xs.at(-1)?.anon ?? Number.NaN)}`).join(', ')} MiB`);
      nextReport += 300_000;
    }
    await sleep(500);
  }
  await Promise.all(clusters.map((c) => new Promise<void>((resolve) => (c.load!.exitCode !== null ? resolve() : c.load!.once('exit', () => resolve())))));
  if (memoryS === soakS) for (const c of clusters) await sample(c, elapsedS());
  report(clusters, soakS, memoryS);
});
