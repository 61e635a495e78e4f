/**
 * What idle clusters cost etcd, the figure that decides how many clusters one etcd serves:
 * raft proposals, range reads and bytes per second per 3-node cluster, read from etcd's own
 * /metrics over a window, for N clusters on one etcd; side by side with Patroni (the
 * Debian package) run the same way when it is installed.
 *
 * For each system and each N: a fresh single-member etcd on free loopback ports, N 3-node
 * clusters (agents with PostgreSQL 15, dynamic settings ttl 20 / loop_wait 2 / retry_timeout
 * 5 by default) started a few at a time, each behind its own byte-counting TCP relay to etcd
 * (what its clients really receive on the wire, gateway JSON included); once every cluster
 * has a primary and two replicas, `--settle` seconds of rest, then etcd's counters and the
 * relays' are read at the start and end of a `--window`; the clusters must still be healthy
 * at the end. Everything started is stopped by PID (also on failure and Ctrl-C) and the
 * temp folders removed (BENCH_KEEP=1 keeps them).
 *
 *   node --import tsx bench/dcs.ts [--clusters 1,20] [--window 60] [--settle 120] [--parallel 3]
 *        [--systems warden,patroni] [--ttl 20] [--loop-wait 2] [--retry-timeout 5] [--skip-compiled]
 *
 * `ETCD_BIN=$(bash scripts/fetch-etcd.sh trixie)` runs it on Debian 13's etcd 3.5 instead of the
 * installed one: with Debian 12's 3.4.23, whose progress answers may overtake changes, the agents
 * read the keys changed since their copy was last complete whenever another cluster wrote.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { ClusterLayout } from '../scripts/lib/cluster-layout.js';
import { ClusterRunner } from '../scripts/lib/cluster-runner.js';
import { sleep } from '../scripts/lib/processes.js';
import { fetchEtcdVersion } from '../src/adapters/cluster-store/etcd3-progress-trust.js';
import { startEtcd, type EtcdServer } from '../test/support/etcd-server.js';
import { freePorts } from '../test/support/free-port.js';
import { DEMO_DCS } from './lib/bench-cluster.js';
import { benchFailed, onCleanup, runBenchmark } from './lib/cleanup.js';
import { compiledCopy } from './lib/compiled-copy.js';
import { CountingProxy } from './lib/counting-proxy.js';
import { costRates, etcdCost, scrapeEtcd, type EtcdCost } from './lib/etcd-metrics.js';
import { PatroniCluster, patroniInstalled, patroniVersion } from './lib/patroni-cluster.js';
import { machineLine } from './lib/machine.js';
import { atMost, fmt, printRuns, printTable, progress, type Row } from './lib/report.js';
import { rssSplitMiB } from './lib/rss.js';
import { median } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    clusters: { type: 'string', default: '1,20' },
    window: { type: 'string', default: '60' },
    settle: { type: 'string', default: '120' },
    parallel: { type: 'string', default: '3' },
    systems: { type: 'string', default: 'warden,patroni' },
    ttl: { type: 'string', default: '20' },
    'loop-wait': { type: 'string', default: '2' },
    'retry-timeout': { type: 'string', default: '5' },
    'skip-compiled': { type: 'boolean', default: false },
  },
});
const counts = values.clusters!.split(',').map(Number);
const windowS = Number(values.window);
const settleMs = Number(values.settle) * 1000;
const parallel = Math.max(1, Number(values.parallel));
const systems = values.systems!.split(',') as ('warden' | 'patroni')[];
const dcs = { ...DEMO_DCS, ttl: Number(values.ttl), loop_wait: Number(values['loop-wait']), retry_timeout: Number(values['retry-timeout']) };
const BIN_DIR = '/usr/lib/postgresql/15/bin';

/** Patroni 3.0.2's figures at idle, 3-node clusters, loop_wait 2, as the goal states them. */
const PATRONI_REFERENCE = { proposals: 0.6, ranges: 0, kbs: 0.18 };

/** Rough memory of one 3-node cluster (agents or Patroni, fencers, PostgreSQL), MiB: N is skipped when it does not fit. */
const MIB_PER_CLUSTER = { warden: 700, patroni: 500 } as const;

/** One cluster under measurement, whatever the system. */
interface Measured {
  readonly port: number;
  readonly proxy: CountingProxy;
  healthy(): Promise<boolean>;
  /** PIDs of the HA processes (agents or Patroni), for their memory. */
  haPids(): number[];
  /** PIDs of the agents' fencer processes (none for Patroni). */
  fencerPids(): number[];
  /** The primary's WAL position as its REST API reports it (`xlog.location`), null when none answers. */
  primaryWal(): Promise<number | null>;
  stop(): Promise<void>;
}

/** The figures of one system at one N. */
interface Result {
  readonly system: 'warden' | 'patroni';
  readonly n: number;
  /** The etcd server's release (`GET /version`): whether it orders its watch progress answers decides the agents' reads. */
  readonly etcdVersion: string;
  /** Per cluster and second. */
  readonly rates: EtcdCost;
  /** Bytes per second per cluster on the wire, from etcd to the clients and back. */
  readonly wireFrom: number;
  readonly wireTo: number;
  readonly rssAnonMiB: number;
  readonly rssMiB: number;
  readonly fencerRssAnonMiB: number;
  readonly unhealthyAtEnd: number;
  /** Clusters whose primary's WAL position moved during the window (checkpoints, autovacuum: some writes are due). */
  readonly walMoved: number;
}

/** The highest `xlog.location` the nodes' status documents (`path`: Warden's /node, Patroni's /patroni) report. */
async function walOf(urls: readonly string[], path: string): Promise<number | null> {
  let best: number | null = null;
  for (const url of urls) {
    try {
      const r = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(2000) });
      const doc = (await r.json()) as { xlog?: { location?: number } };
      const loc = doc.xlog?.location;
      if (typeof loc === 'number') best = Math.max(best ?? 0, loc);
    } catch {
      // not answering
    }
  }
  return best;
}

function memAvailableMiB(): number {
  const line = readFileSync('/proc/meminfo', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('MemAvailable:'));
  return line ? Number(line.split(/\s+/)[1]) / 1024 : Number.POSITIVE_INFINITY;
}

/** A 3-node layout in `dir` on free ports, against the etcd relay at `etcdPort` (etcd itself is shared). */
async function benchLayout(dir: string, scope: string, etcdPort: number): Promise<ClusterLayout> {
  const ports = await freePorts(6);
  return {
    dir,
    scope,
    namespace: '/service',
    etcdClientPort: etcdPort,
    etcdPeerPort: 0,
    // The relay counts what a cluster costs: the agents must not go round it to the members etcd advertises.
    etcdProxy: true,
    nodes: [0, 1, 2].map((k) => ({ name: `node${k + 1}`, apiPort: ports[k]!, pgPort: ports[3 + k]! })),
    dcs,
    binDir: BIN_DIR,
  };
}

async function startWarden(i: number, base: string, etcdPort: number, launcher: string | undefined): Promise<Measured> {
  const proxy = await CountingProxy.start(etcdPort);
  const layout = await benchLayout(join(base, `warden${i}`), `bench${i}`, proxy.port);
  const runner = launcher ? new ClusterRunner(layout, launcher) : new ClusterRunner(layout);
  runner.prepare(true);
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      await runner.down();
      await proxy.stop();
    })());
  onCleanup(stop);
  for (const n of layout.nodes) runner.startAgent(n.name);
  await runner.waitHealthy(300_000);
  return {
    port: proxy.port,
    proxy,
    async healthy() {
      try {
        await runner.waitHealthy(3000);
        return true;
      } catch {
        return false;
      }
    },
    haPids: () => layout.nodes.map((n) => runner.agentPid(n.name)).filter((p): p is number => p !== undefined),
    fencerPids: () => layout.nodes.map((n) => runner.fencerPid(n.name)).filter((p): p is number => p !== undefined),
    primaryWal: () => walOf(layout.nodes.map((n) => runner.apiUrl(n.name)), '/node'),
    stop,
  };
}

async function startPatroni(i: number, base: string, etcdPort: number): Promise<Measured> {
  const proxy = await CountingProxy.start(etcdPort);
  let cluster: PatroniCluster | undefined;
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      await cluster?.stop();
      await proxy.stop();
    })());
  onCleanup(stop);
  const layout = await benchLayout(join(base, `patroni${i}`), `pbench${i}`, proxy.port);
  cluster = PatroniCluster.startOn(layout, { logLevel: 'WARNING' });
  const c = cluster;
  await c.waitHealthy(300_000);
  const healthy = async () => {
    try {
      return (await c.healthyPrimary()) !== undefined;
    } catch {
      return false;
    }
  };
  return { port: proxy.port, proxy, healthy, haPids: () => c.livePids(), fencerPids: () => [], primaryWal: () => walOf(layout.nodes.map((n) => c.runner.apiUrl(n.name)), '/patroni'), stop };
}

/** Starts `n` clusters of `system` on a fresh etcd, measures the window, stops everything. */
async function measure(system: 'warden' | 'patroni', n: number, launcher: string | undefined): Promise<Result | null> {
  const need = n * MIB_PER_CLUSTER[system];
  const have = memAvailableMiB();
  if (need > 0.8 * have) {
    progress(`${system} x${n}: skipped, needs ~${need} MiB and ${Math.round(have)} MiB are available`);
    return null;
  }
  const base = mkdtempSync(join(tmpdir(), `warden-bench-dcs-${system}-`));
  chmodSync(base, 0o755);
  let etcd: EtcdServer | undefined;
  const clusters: Measured[] = [];
  let done = false;
  const teardown = async () => {
    if (done) return;
    done = true;
    progress(`${system} x${n}: stopping ${clusters.length} clusters and etcd`);
    await Promise.all(clusters.map((c) => c.stop()));
    await etcd?.cleanup();
    if (!benchFailed() && process.env['BENCH_KEEP'] !== '1') rmSync(base, { recursive: true, force: true });
    else progress(`kept ${base}`);
  };
  onCleanup(teardown);
  try {
    etcd = await startEtcd();
    const etcdPort = Number(etcd.host.split(':')[1]);
    const etcdVersion = (await fetchEtcdVersion(etcd.endpoint, {}, 5000)) ?? 'unknown';
    progress(`${system} x${n}: etcd ${etcdVersion} on ${etcd.endpoint} (pid ${etcd.pid}), starting ${n} clusters ${parallel} at a time in ${base}`);
    for (let i = 1; i <= n; i += parallel) {
      const batch = [];
      for (let k = i; k < i + parallel && k <= n; k++) batch.push(system === 'warden' ? startWarden(k, base, etcdPort, launcher) : startPatroni(k, base, etcdPort));
      const started = await Promise.allSettled(batch);
      for (const s of started) if (s.status === 'fulfilled') clusters.push(s.value);
      const failed = started.find((s) => s.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
      progress(`${system} x${n}: ${clusters.length} clusters healthy`);
    }
    progress(`${system} x${n}: settling ${settleMs / 1000} s (MemAvailable ${Math.round(have)} MiB before the clusters, ${Math.round(memAvailableMiB())} MiB now)`);
    await sleep(settleMs);
    const unhealthyAtStart = (await Promise.all(clusters.map((c) => c.healthy()))).filter((h) => !h).length;
    if (unhealthyAtStart > 0) progress(`${system} x${n}: ${unhealthyAtStart} clusters not healthy before the window`);
    const wal0 = await Promise.all(clusters.map((c) => c.primaryWal()));
    const wire0 = clusters.map((c) => [c.proxy.fromEtcd, c.proxy.toEtcd] as const);
    const before = etcdCost(await scrapeEtcd(etcd.endpoint));
    const t0 = performance.now();
    await sleep(windowS * 1000);
    const after = etcdCost(await scrapeEtcd(etcd.endpoint));
    const seconds = (performance.now() - t0) / 1000;
    const wire1 = clusters.map((c) => [c.proxy.fromEtcd, c.proxy.toEtcd] as const);
    const wal1 = await Promise.all(clusters.map((c) => c.primaryWal()));
    const unhealthyAtEnd = (await Promise.all(clusters.map((c) => c.healthy()))).filter((h) => !h).length;
    const memory = clusters.flatMap((c) => c.haPids()).map((p) => rssSplitMiB(p));
    const fencers = clusters.flatMap((c) => c.fencerPids()).map((p) => rssSplitMiB(p)?.anon ?? Number.NaN);
    const sum = (k: 0 | 1) => wire1.reduce((a, w, i) => a + w[k] - wire0[i]![k], 0);
    const result: Result = {
      system,
      n,
      etcdVersion,
      rates: costRates(before, after, seconds, n),
      wireFrom: sum(0) / seconds / n,
      wireTo: sum(1) / seconds / n,
      rssAnonMiB: median(memory.map((m) => m?.anon ?? Number.NaN)),
      rssMiB: median(memory.map((m) => m?.rss ?? Number.NaN)),
      fencerRssAnonMiB: median(fencers),
      unhealthyAtEnd: unhealthyAtEnd + unhealthyAtStart,
      walMoved: wal1.filter((w, i) => w === null || w !== wal0[i]).length,
    };
    progress(`${system} x${n}: ${JSON.stringify(result)}`);
    return result;
  } finally {
    await teardown();
  }
}

function kb(bytesPerSecond: number): number {
  return bytesPerSecond / 1000;
}

function report(n: number, warden: Result | null, patroni: Result | null): void {
  const col = (r: Result | null, f: (r: Result) => number) => (r ? fmt(f(r)) : '-');
  const lines: [string, (r: Result) => number][] = [
    ['raft proposals/s', (r) => r.rates.proposals],
    ['range reads/s (Range RPCs)', (r) => r.rates.ranges],
    ['MVCC reads/s (ranges + txn compares)', (r) => r.rates.mvccRanges],
    ['KB/s etcd sent (etcd_network_client_grpc_sent_bytes_total)', (r) => kb(r.rates.sentBytes)],
    ['KB/s etcd received (gRPC)', (r) => kb(r.rates.receivedBytes)],
    ['KB/s on the wire, etcd -> clients (relay)', (r) => kb(r.wireFrom)],
    ['KB/s on the wire, clients -> etcd (relay)', (r) => kb(r.wireTo)],
    ['txn/s', (r) => r.rates.txns],
    ['put/s', (r) => r.rates.puts],
    ['delete/s', (r) => r.rates.deletes],
    ['lease grants/s', (r) => r.rates.leaseGrants],
    ['lease keep-alives/s', (r) => r.rates.keepAlives],
    ['lease time-to-live/s', (r) => r.rates.leaseTimeToLives],
    ['watch messages received/s', (r) => r.rates.watchReceived],
    ['watch messages sent/s', (r) => r.rates.watchSent],
    ['HA process RssAnon, median (MiB)', (r) => r.rssAnonMiB],
    ['HA process VmRSS, median (MiB)', (r) => r.rssMiB],
    ['fencer RssAnon, median (MiB)', (r) => r.fencerRssAnonMiB],
    ['clusters not healthy before or after the window (count)', (r) => r.unhealthyAtEnd],
    ['clusters whose primary wrote WAL during the window (count)', (r) => r.walMoved],
  ];
  printRuns(
    `etcd cost per 3-node cluster, ${n} cluster${n > 1 ? 's' : ''} on one etcd ${warden?.etcdVersion ?? patroni?.etcdVersion ?? ''} (idle, ttl ${dcs.ttl} / loop_wait ${dcs.loop_wait}, ${windowS} s window)`,
    ['figure (per cluster)', launcherNote, patroni ? patroniVersion() : 'Patroni (not run)'],
    lines.map(([name, f]) => [name, col(warden, f), col(patroni, f)]),
  );
  if (!warden) return;
  const ref = patroni ? { proposals: patroni.rates.proposals, ranges: patroni.rates.ranges, kbs: kb(patroni.rates.sentBytes) } : PATRONI_REFERENCE;
  const whence = patroni ? `Patroni measured in this run` : 'Patroni 3.0.2 as the goal states it';
  const rows: Row[] = [
    { figure: 'raft proposals/s per cluster', value: warden.rates.proposals, unit: '', goal: atMost(round2(ref.proposals)), note: whence },
    { figure: 'range reads/s per cluster', value: warden.rates.ranges, unit: '', goal: atMost(round2(ref.ranges)), note: whence },
    { figure: 'KB/s etcd sends per cluster', value: kb(warden.rates.sentBytes), unit: 'KB/s', goal: atMost(round2(ref.kbs)), note: whence },
  ];
  printTable(`Warden against Patroni's figures, ${n} cluster${n > 1 ? 's' : ''}`, rows, `${machineLine().replace(/; code: .*$/, '')}; agents: ${launcherNote}`);
}

/** Goals compare at the precision they are printed with. */
function round2(x: number): number {
  return Math.max(0, Math.ceil(x * 100 - 1e-9) / 100);
}

let launcherNote = 'Warden';

await runBenchmark(async () => {
  const wantPatroni = systems.includes('patroni') && patroniInstalled();
  if (systems.includes('patroni') && !wantPatroni) progress('patroni is not installed: Warden alone, against the figures the goal states');
  const launcher = systems.includes('warden') && !values['skip-compiled'] ? join(await compiledCopy(), 'bin', 'warden.js') : undefined;
  launcherNote = launcher ? 'Warden (compiled)' : 'Warden (sources, tsx)';
  for (const n of counts) {
    const warden = systems.includes('warden') ? await measure('warden', n, launcher) : null;
    const patroni = wantPatroni ? await measure('patroni', n, undefined) : null;
    report(n, warden, patroni);
  }
});
