/**
 * The metrics exporter against a real PostgreSQL 15 primary (with one streaming replica, so the
 * replication collectors have rows): the compiled exporter as installed (its launcher and V8
 * flags) side by side with postgres_exporter (Debian prometheus-postgres-exporter) when
 * installed, each with its default collectors under the same load: samples, scrape time,
 * scrapes/s with 16 concurrent scrapers, private memory (RssAnon) idle and after the load,
 * statements per second sent to the server (pg_stat_statements, each exporter as its own role),
 * promtool problems. Then the exporter again with one more collector of ttl 0 (it must run on
 * every scrape run): its runs per served scrape and the statements per second, under 16 scrapers.
 *
 *   node --import tsx bench/exporter.ts [--scrapes 50] [--seconds 60] [--ttl0-seconds 20]
 *                                       [--heap-snapshot FILE] [--skip-compiled]
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sleep, spawnDetached, stopPid, waitFor } from '../scripts/lib/processes.js';
import { freePort } from '../test/support/free-port.js';
import { startPrimary, startReplica, type PgServer } from '../test/support/postgres-server.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { compiledCopy } from './lib/compiled-copy.js';
import { cpuTimeMs } from './lib/cpu.js';
import { heapSnapshotSummary } from './lib/heap-summary.js';
import { loadTest, type LoadResult } from './lib/load.js';
import { memoryProbe, readMemoryReport, type MemoryReport } from './lib/memory-probe.js';
import { promtoolCount } from './lib/promtool.js';
import { atLeast, atMost, fmt, printTable, progress, type Row } from './lib/report.js';
import { rssSplitMiB } from './lib/rss.js';
import { max, median } from './lib/stats.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const POSTGRES_EXPORTER = '/usr/bin/prometheus-postgres-exporter';

const { values } = parseArgs({
  options: {
    scrapes: { type: 'string', default: '50' },
    seconds: { type: 'string', default: '60' },
    'ttl0-seconds': { type: 'string', default: '20' },
    'heap-snapshot': { type: 'string' },
    'skip-compiled': { type: 'boolean', default: false },
  },
});
const scrapes = Number(values.scrapes);
const seconds = Number(values.seconds);
const ttl0Seconds = Number(values['ttl0-seconds']);

/** A running exporter process (ours or postgres_exporter). */
interface Exporter {
  readonly name: string;
  readonly base: string;
  readonly metricsUrl: string;
  readonly pid: number;
  readonly role: string;
  stop(): Promise<void>;
}

/** The default collectors plus a ttl-0 collector: it runs on every scrape run, so runs per served scrape show the coalescing. */
function configWithTtl0(dir: string, packageRoot: string): string {
  const conf = join(dir, 'collectors');
  cpSync(join(packageRoot, 'collectors'), conf, { recursive: true });
  rmSync(join(conf, 'pgbouncer'), { recursive: true, force: true });
  writeFileSync(
    join(conf, '99-bench.yml'),
    'db_bench_now:\n  desc: Server clock, read on every scrape run\n  query: SELECT extract(epoch FROM clock_timestamp()) AS now\n  ttl: 0\n  tags: [cluster]\n  metrics:\n    - now: {usage: GAUGE, unit: seconds, description: "Server clock as Unix time"}\n',
  );
  return conf;
}

async function startWarden(packageRoot: string, pg: PgServer, dir: string, env: Record<string, string>, config?: string): Promise<Exporter> {
  const port = await freePort();
  const url = pg.connString.replace('postgres://postgres@', 'postgres://warden_bench@');
  // Executed directly, so the launcher's shebang flags apply as for an installed exporter.
  const bin = join(packageRoot, 'bin', 'warden-exporter.js');
  const pid = spawnDetached(bin, ['--url', url, ...(config ? ['--config', config] : []), '--web.listen-address', `127.0.0.1:${port}`, '--log.level', 'warn'], join(dir, `warden-exporter-${port}.log`), { ...process.env, ...env });
  const stop = () => stopPid(pid, 10_000);
  onCleanup(stop);
  const base = `http://127.0.0.1:${port}`;
  await waitFor('warden-exporter to be ready', 60_000, async () => ((await fetch(`${base}/readiness`, { signal: AbortSignal.timeout(2000) })).status === 200 ? true : undefined), 200);
  return { name: 'warden-exporter', base, metricsUrl: `${base}/metrics`, pid, role: 'warden_bench', stop };
}

async function startPostgresExporter(pg: PgServer, dir: string): Promise<Exporter> {
  const port = await freePort();
  const dsn = `postgresql://pe_bench@127.0.0.1:${pg.port}/postgres?sslmode=disable`;
  const pid = spawnDetached(POSTGRES_EXPORTER, ['--web.listen-address', `127.0.0.1:${port}`, '--log.level', 'warn'], join(dir, 'postgres_exporter.log'), { ...process.env, DATA_SOURCE_NAME: dsn });
  const stop = () => stopPid(pid, 10_000);
  onCleanup(stop);
  const base = `http://127.0.0.1:${port}`;
  await waitFor('postgres_exporter to answer', 30_000, async () => ((await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(5000) })).ok ? true : undefined), 200);
  return { name: 'postgres_exporter', base, metricsUrl: `${base}/metrics`, pid, role: 'pe_bench', stop };
}

async function scrape(url: string): Promise<{ ms: number; body: string }> {
  const t0 = performance.now();
  const r = await fetch(url);
  const body = await r.text();
  const ms = performance.now() - t0;
  if (r.status !== 200) throw new Error(`GET ${url} answered ${r.status}: ${body.slice(0, 300)}`);
  return { ms, body };
}

function sampleCount(body: string): number {
  return body.split('\n').filter((l) => l !== '' && !l.startsWith('#')).length;
}

/** Statements a role sent, from pg_stat_statements (utility statements such as SET included). */
async function statements(pg: PgServer, role: string): Promise<number> {
  return Number(await pg.psql(`SELECT coalesce(sum(calls), 0) FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid WHERE r.rolname = '${role}'`));
}

/** Runs of one collector, from the exporter's /stat. */
async function collectorRuns(base: string, name: string): Promise<number> {
  const s = (await (await fetch(`${base}/stat?format=json`)).json()) as { collectors: { name: string; runs: number }[] };
  return s.collectors.find((c) => c.name === name)?.runs ?? Number.NaN;
}

/** What one exporter measured. */
interface Measured {
  readonly exporter: Exporter;
  readonly samples: number;
  readonly seqMedianMs: number;
  readonly seqMaxMs: number;
  readonly idle: ReturnType<typeof rssSplitMiB>;
  readonly load: LoadResult;
  readonly afterLoad: ReturnType<typeof rssSplitMiB>;
  readonly settled: ReturnType<typeof rssSplitMiB>;
  readonly statementsPerSecond: number;
  readonly promtool: number;
  readonly heapAfter?: MemoryReport;
}

async function measure(e: Exporter, pg: PgServer, probeFile?: string): Promise<Measured> {
  const first = await scrape(e.metricsUrl);
  const ms: number[] = [];
  let last = first.body;
  for (let i = 0; i < scrapes; i++) {
    const s = await scrape(e.metricsUrl);
    ms.push(s.ms);
    last = s.body;
  }
  progress(`${e.name}: ${scrapes} sequential scrapes, median ${median(ms).toFixed(2)} ms, ${sampleCount(last)} samples`);
  await sleep(3000);
  const idle = rssSplitMiB(e.pid);
  const st0 = await statements(pg, e.role);
  const cpu0 = cpuTimeMs(e.pid);
  progress(`${e.name}: 16 concurrent scrapers for ${seconds} s`);
  const load = await loadTest(e.metricsUrl, 16, seconds, e.pid);
  const afterLoad = rssSplitMiB(e.pid);
  const st1 = await statements(pg, e.role);
  const heapAfter = probeFile ? await readMemoryReport(e.pid, probeFile) : undefined;
  progress(`${e.name}: ${load.reqPerSec.toFixed(0)} scrapes/s, p99 ${load.p99} ms, non-2xx ${load.non2xx}, errors ${load.errors}; CPU ${fmt(((cpuTimeMs(e.pid) ?? Number.NaN) - (cpu0 ?? Number.NaN)) / 1000)} s`);
  await sleep(10_000);
  const settled = rssSplitMiB(e.pid);
  return {
    exporter: e,
    samples: sampleCount(last),
    seqMedianMs: median(ms),
    seqMaxMs: max(ms),
    idle,
    load,
    afterLoad,
    settled,
    statementsPerSecond: (st1 - st0) / (load.seconds || seconds),
    promtool: await promtoolCount(last),
    ...(heapAfter ? { heapAfter } : {}),
  };
}

await runBenchmark(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-exporter-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const build = values['skip-compiled'] ? Promise.resolve(repoRoot) : compiledCopy();
  progress('starting a PostgreSQL 15 primary (pg_stat_statements) and a streaming replica');
  const primary = await startPrimary({ parameters: { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.max': 10000 } });
  onCleanup(() => primary.destroy());
  await primary.psql('CREATE EXTENSION pg_stat_statements; CREATE ROLE warden_bench LOGIN SUPERUSER; CREATE ROLE pe_bench LOGIN SUPERUSER');
  const replica = await startReplica(primary);
  onCleanup(() => replica.destroy());
  const packageRoot = await build;

  // The memory probe and the snapshot signal only when a snapshot is asked for: the figures are of the exporter alone.
  const snapshot = values['heap-snapshot'];
  const probe = snapshot ? memoryProbe(dir) : undefined;
  const env: Record<string, string> = probe ? { ...probe.env, NODE_OPTIONS: [...probe.nodeArgs, '--heapsnapshot-signal=SIGUSR1', `--diagnostic-dir=${dir}`].join(' ') } : {};
  const warden = await startWarden(packageRoot, primary, dir, env);
  const ours = await measure(warden, primary, probe?.reportFile);
  let snapshotNote = '';
  if (snapshot) {
    process.kill(warden.pid, 'SIGUSR1');
    const file = await waitFor('the heap snapshot', 60_000, async () => {
      const { readdirSync, statSync } = await import('node:fs');
      const f = readdirSync(dir).find((n) => n.endsWith('.heapsnapshot'));
      if (!f) return undefined;
      const size = statSync(join(dir, f)).size;
      await sleep(500);
      return statSync(join(dir, f)).size === size && size > 0 ? join(dir, f) : undefined;
    }, 250);
    cpSync(file, snapshot);
    snapshotNote = heapSnapshotSummary(readFileSync(snapshot, 'utf8'));
  }
  await warden.stop();

  progress(`warden-exporter with a ttl-0 collector: 16 concurrent scrapers for ${ttl0Seconds} s`);
  const withTtl0 = await startWarden(packageRoot, primary, dir, {}, configWithTtl0(dir, packageRoot));
  await scrape(withTtl0.metricsUrl);
  const runs0 = await collectorRuns(withTtl0.base, 'db_bench_now');
  const sent0 = await statements(primary, withTtl0.role);
  const ttl0Load = await loadTest(withTtl0.metricsUrl, 16, ttl0Seconds, withTtl0.pid);
  const sent1 = await statements(primary, withTtl0.role);
  const runs1 = await collectorRuns(withTtl0.base, 'db_bench_now');
  await withTtl0.stop();
  const ttl0RunsPerScrape = (runs1 - runs0) / Math.max(1, ttl0Load.total);
  const ttl0StatementsPerSecond = (sent1 - sent0) / (ttl0Load.seconds || ttl0Seconds);
  progress(`  ${fmt(ttl0Load.reqPerSec)} scrapes/s, ${fmt(ttl0RunsPerScrape)} ttl-0 runs per scrape, ${fmt(ttl0StatementsPerSecond)} statements/s`);

  let theirs: Measured | undefined;
  if (existsSync(POSTGRES_EXPORTER)) {
    const pe = await startPostgresExporter(primary, dir);
    theirs = await measure(pe, primary);
    await pe.stop();
  } else progress(`${POSTGRES_EXPORTER} not installed (Debian prometheus-postgres-exporter): no side-by-side figures`);

  const anon = (m?: Measured, which: 'idle' | 'afterLoad' | 'settled' = 'idle') => m?.[which]?.anon ?? Number.NaN;
  const rows: Row[] = [
    { figure: 'samples per scrape', value: ours.samples, unit: '', goal: atLeast(500), note: theirs ? `postgres_exporter: ${theirs.samples}` : '' },
    { figure: `scrape duration, median of ${scrapes}`, value: ours.seqMedianMs, unit: 'ms', goal: atMost(6), note: `one after the other; max ${fmt(ours.seqMaxMs)} ms${theirs ? `; postgres_exporter median ${fmt(theirs.seqMedianMs)} ms` : ''}` },
    { figure: 'scrapes/s, 16 concurrent scrapers', value: ours.load.reqPerSec, unit: '/s', goal: atLeast(1500), note: `${seconds} s; p99 ${ours.load.p99} ms${theirs ? `; postgres_exporter ${fmt(theirs.load.reqPerSec)} /s` : ''}` },
    { figure: '  non-2xx + errors', value: ours.load.non2xx + ours.load.errors + ours.load.timeouts, unit: '', goal: atMost(0) },
    { figure: 'statements/s sent, 16 scrapers', value: ours.statementsPerSecond, unit: '/s', note: theirs ? `postgres_exporter: ${fmt(theirs.statementsPerSecond)} /s` : '' },
    { figure: 'private memory (RssAnon) idle', value: anon(ours), unit: 'MiB', note: theirs ? `postgres_exporter: ${fmt(anon(theirs))} MiB` : '' },
    { figure: `private memory after ${seconds} s of 16 scrapers`, value: anon(ours, 'afterLoad'), unit: 'MiB', note: `10 s later ${fmt(anon(ours, 'settled'))} MiB${theirs ? `; postgres_exporter ${fmt(anon(theirs, 'afterLoad'))} (${fmt(anon(theirs, 'settled'))}) MiB` : ''}` },
    { figure: 'RSS peak under load', value: ours.load.peakRssMiB ?? Number.NaN, unit: 'MiB', note: `mapped files ${fmt(ours.afterLoad?.file ?? Number.NaN)} MiB (mostly the node binary)${theirs ? `; postgres_exporter peak ${fmt(theirs.load.peakRssMiB ?? Number.NaN)} MiB` : ''}` },
    { figure: 'promtool check metrics: problems', value: ours.promtool, unit: '', goal: atMost(0), note: theirs ? `postgres_exporter: ${theirs.promtool}` : '' },
    { figure: 'with a ttl-0 collector: its runs per served scrape', value: ttl0RunsPerScrape, unit: '', goal: atMost(0.5), note: `16 scrapers, ${ttl0Seconds} s: concurrent scrapes share one run; ${fmt(ttl0Load.reqPerSec)} scrapes/s` },
    { figure: 'with a ttl-0 collector: statements/s sent', value: ttl0StatementsPerSecond, unit: '/s' },
  ];
  if (theirs) {
    rows.push(
      { figure: 'statements/s vs postgres_exporter', value: ours.statementsPerSecond / theirs.statementsPerSecond, unit: 'x', goal: atMost(0.1), note: 'default collectors' },
      { figure: '  with a ttl-0 collector', value: ttl0StatementsPerSecond / theirs.statementsPerSecond, unit: 'x', goal: atMost(0.1) },
      { figure: 'private memory after load vs postgres_exporter', value: anon(ours, 'afterLoad') / anon(theirs, 'afterLoad'), unit: 'x', goal: atMost(2.5) },
      { figure: 'scrapes/s vs postgres_exporter', value: ours.load.reqPerSec / theirs.load.reqPerSec, unit: 'x' },
    );
  }
  if (ours.heapAfter) {
    const h = ours.heapAfter;
    rows.push({ figure: 'V8 heap after load: used / committed', value: h.heapUsed, unit: 'MiB', note: `committed ${fmt(h.heapTotal)} MiB (old ${fmt(h.spaces['old_space'] ?? Number.NaN)}, new ${fmt(h.spaces['new_space'] ?? Number.NaN)}, code ${fmt(h.spaces['code_space'] ?? Number.NaN)}); external ${fmt(h.external)} MiB; ${h.threads} threads` });
  }
  printTable(`exporter: default collectors, PostgreSQL 15 primary with one replica; ${packageRoot === repoRoot ? 'sources through tsx' : 'compiled, launched as installed'}`, rows);
  if (snapshotNote) console.log(`\nheap snapshot after load (${snapshot}):\n${snapshotNote}`);
});
