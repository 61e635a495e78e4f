/**
 * The metrics exporter against a real PostgreSQL 15 primary (with one streaming replica, so the
 * replication collectors have rows), default collectors: duration of 50 back-to-back scrapes
 * of /metrics (median), samples per scrape, scrapes/s with 16 concurrent scrapers, and RSS.
 * A second exporter with --disable-cache shows what one full run of the collectors costs.
 *
 *   node --import tsx bench/exporter.ts [--scrapes 50] [--seconds 5] [--rounds 2]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sleep, spawnDetached, stopPid, waitFor } from '../scripts/lib/processes.js';
import { freePort } from '../test/support/free-port.js';
import { startPrimary, startReplica, type PgServer } from '../test/support/postgres-server.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { cpuTimeMs } from './lib/cpu.js';
import { loadTest, type LoadResult } from './lib/load.js';
import { atLeast, atMost, fmt, printTable, progress, type Row } from './lib/report.js';
import { rssSplitMiB } from './lib/rss.js';
import { max, median, percentile } from './lib/stats.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

const { values } = parseArgs({
  options: {
    scrapes: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '2' },
  },
});
const scrapes = Number(values.scrapes);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);

/** A running exporter process. */
interface Exporter {
  readonly url: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/** Starts bin/warden-exporter.js on a free loopback port against `pg` and waits until it is ready. */
async function startExporter(pg: PgServer, logDir: string, extra: readonly string[] = []): Promise<Exporter> {
  const port = await freePort();
  const args = [join(repoRoot, 'bin', 'warden-exporter.js'), '--url', pg.connString, '--web.listen-address', `127.0.0.1:${port}`, '--log.level', 'warn', ...extra];
  const pid = spawnDetached(process.execPath, args, join(logDir, `exporter-${port}.log`));
  const stop = () => stopPid(pid, 10_000);
  onCleanup(stop);
  const url = `http://127.0.0.1:${port}`;
  await waitFor('the exporter to be ready', 60_000, async () => ((await fetch(`${url}/readiness`, { signal: AbortSignal.timeout(2000) })).status === 200 ? true : undefined), 200);
  return { url, pid, stop };
}

/** One scrape: wall time (request to last byte, ms) and the body. */
async function scrape(url: string): Promise<{ ms: number; body: string }> {
  const t0 = performance.now();
  const r = await fetch(`${url}/metrics`);
  const body = await r.text();
  const ms = performance.now() - t0;
  if (r.status !== 200) throw new Error(`GET /metrics answered ${r.status}: ${body.slice(0, 300)}`);
  return { ms, body };
}

/** Sample lines of a Prometheus text body, split into collector samples and the exporter's own / process metrics. */
function countSamples(body: string): { total: number; collectors: number } {
  let total = 0;
  let own = 0;
  for (const line of body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    total++;
    if (/^(db_exporter_|process_|nodejs_|db_up|db_version|db_in_recovery)/.test(line)) own++;
  }
  return { total, collectors: total - own };
}

/** The exporter's own view of its last scrape, seconds, from db_exporter_scrape_duration_seconds. */
function serverSideScrapeMs(body: string): number {
  const m = /^db_exporter_scrape_duration_seconds(?:\{[^}]*\})? ([0-9.eE+-]+)$/m.exec(body);
  return m ? Number(m[1]) * 1000 : Number.NaN;
}

/** Sequential scrapes: durations, CPU the exporter used per scrape, and the last body. */
async function sequential(exporter: Exporter, n: number): Promise<{ ms: number[]; cpuMsPerScrape: number; last: string }> {
  const ms: number[] = [];
  let last = '';
  const cpu0 = cpuTimeMs(exporter.pid) ?? Number.NaN;
  for (let i = 0; i < n; i++) {
    const s = await scrape(exporter.url);
    ms.push(s.ms);
    last = s.body;
  }
  const cpu1 = cpuTimeMs(exporter.pid) ?? Number.NaN;
  return { ms, cpuMsPerScrape: (cpu1 - cpu0) / n, last };
}

await runBenchmark(async () => {
  const logDir = mkdtempSync(join(tmpdir(), 'warden-bench-exporter-'));
  onCleanup(() => rmSync(logDir, { recursive: true, force: true }));
  progress('starting a PostgreSQL 15 primary and a streaming replica');
  const primary = await startPrimary();
  onCleanup(() => primary.destroy());
  const replica = await startReplica(primary);
  onCleanup(() => replica.destroy());

  const exporter = await startExporter(primary, logDir);
  const cold = await scrape(exporter.url);
  progress(`first scrape: ${cold.ms.toFixed(1)} ms, ${countSamples(cold.body).total} samples`);
  await sleep(2000);
  const idle = rssSplitMiB(exporter.pid);

  const seq = await sequential(exporter, scrapes);
  const samples = countSamples(seq.last);
  progress(`${scrapes} sequential scrapes: median ${median(seq.ms).toFixed(2)} ms, max ${max(seq.ms).toFixed(1)} ms, ${samples.total} samples`);

  let best: LoadResult | undefined;
  await loadTest(`${exporter.url}/metrics`, 16, 1);
  for (let i = 0; i < rounds; i++) {
    const r = await loadTest(`${exporter.url}/metrics`, 16, seconds, exporter.pid);
    progress(`16 concurrent scrapers: ${r.reqPerSec.toFixed(0)} scrapes/s, p50 ${r.p50} ms, p99 ${r.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`);
    if (!best || r.reqPerSec > best.reqPerSec) best = r;
  }
  const afterLoad = rssSplitMiB(exporter.pid);
  await exporter.stop();

  const uncachedExporter = await startExporter(primary, logDir, ['--disable-cache']);
  await scrape(uncachedExporter.url);
  const uncached = await sequential(uncachedExporter, Math.min(scrapes, 20));
  progress(`--disable-cache: median ${median(uncached.ms).toFixed(1)} ms (server side ${serverSideScrapeMs(uncached.last).toFixed(1)} ms)`);
  await uncachedExporter.stop();

  const split = (s: ReturnType<typeof rssSplitMiB>) => (s ? `private ${fmt(s.anon)} MiB + mapped files ${fmt(s.file)} MiB` : '');
  const rows: Row[] = [
    { figure: 'samples per scrape', value: samples.total, unit: '', goal: atLeast(500), note: `${samples.collectors} from collectors, the rest built-in/process` },
    { figure: `scrape duration, median of ${scrapes}`, value: median(seq.ms), unit: 'ms', goal: atMost(6), note: 'back to back: TTL caches warm' },
    { figure: `scrape duration, p90 / max`, value: percentile(seq.ms, 90), unit: 'ms', note: `max ${fmt(max(seq.ms))} ms` },
    { figure: 'exporter CPU per cached scrape', value: seq.cpuMsPerScrape, unit: 'ms', note: '10 ms clock ticks averaged' },
    { figure: 'first scrape (cold)', value: cold.ms, unit: 'ms', note: 'plans collectors, runs every query' },
    { figure: 'scrape with --disable-cache, median', value: median(uncached.ms), unit: 'ms', note: `every query every time; exporter CPU ${fmt(uncached.cpuMsPerScrape)} ms/scrape` },
  ];
  if (best) {
    rows.push(
      { figure: 'scrapes/s, 16 concurrent scrapers', value: best.reqPerSec, unit: '/s', goal: atLeast(1500), note: `best of ${rounds} runs of ${seconds} s; p50 ${best.p50} ms, p99 ${best.p99} ms` },
      { figure: '  non-2xx + errors', value: best.non2xx + best.errors + best.timeouts, unit: '', goal: atMost(0) },
      { figure: '  exporter CPU per scrape under load', value: best.cpuUsPerRequest ?? Number.NaN, unit: 'µs', note: best.cpuUsPerRequest ? `one free core: ~${fmt(1e6 / best.cpuUsPerRequest)} scrapes/s` : '' },
    );
  }
  rows.push(
    { figure: 'exporter RSS idle', value: idle?.rss ?? Number.NaN, unit: 'MiB', note: split(idle) },
    { figure: 'exporter RSS under load, peak', value: best?.peakRssMiB ?? Number.NaN, unit: 'MiB' },
    { figure: 'exporter RSS after load', value: afterLoad?.rss ?? Number.NaN, unit: 'MiB', note: split(afterLoad) },
  );
  printTable('exporter (default collectors, PostgreSQL 15 primary with one replica)', rows);
});
