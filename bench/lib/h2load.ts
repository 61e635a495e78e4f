import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cpuTimeMs } from './cpu.js';
import { RssSampler } from './rss.js';
import type { LoadResult } from './load-result.js';
import { percentile } from './stats.js';

/** h2load (nghttp2's load generator, C, one thread) speaking HTTP/1.1: it costs the machine far less per request than the servers it drives. */
export const H2LOAD = process.env['H2LOAD'] ?? '/usr/bin/h2load';

/** True when h2load is installed (Debian package nghttp2-client). */
export function h2loadInstalled(): boolean {
  return existsSync(H2LOAD);
}

/** The figures h2load prints at its end: requests sent, errored and timed out, and its requests per second. */
export function h2loadSummary(stdout: string): { total: number; errored: number; timeout: number; reqPerSec: number } {
  const m = /requests: (\d+) total, \d+ started, \d+ done, \d+ succeeded, \d+ failed, (\d+) errored, (\d+) timeout/.exec(stdout);
  if (!m) throw new Error(`h2load printed no summary: ${stdout.slice(0, 500)}`);
  const rate = /finished in [\d.]+s, ([\d.]+) req\/s/.exec(stdout);
  return { total: Number(m[1]), errored: Number(m[2]), timeout: Number(m[3]), reqPerSec: rate ? Number(rate[1]) : Number.NaN };
}

/** Runs h2load with `args` plus a per-request log; the log's rows (start µs since the epoch, status, µs to the end of the answer) and h2load's output. */
async function run(args: readonly string[], url: string, timeoutMs: number): Promise<{ rows: { startUs: number; status: number; us: number }[]; stdout: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-h2load-'));
  try {
    const log = join(dir, 'requests.tsv');
    const { stdout } = await promisify(execFile)(H2LOAD, ['--h1', '-t1', ...args, `--log-file=${log}`, url], { maxBuffer: 4 * 1024 * 1024, timeout: timeoutMs });
    const rows = readFileSync(log, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [startUs, status, us] = l.split('\t').map(Number);
        return { startUs: startUs!, status: status!, us: us! };
      });
    return { rows, stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Drives `url` over `connections` keep-alive connections (each sends its next request as soon
 * as the last one is answered): they open and run for `warmUpSeconds` unmeasured, then the
 * same connections are measured for `seconds`. `watchPid`'s CPU time (over the measured
 * period) and peak RSS are sampled meanwhile. `atMeasureStart` runs when measuring begins.
 */
export async function keepAliveLoad(
  url: string,
  connections: number,
  seconds: number,
  o: { readonly warmUpSeconds: number; readonly watchPid?: number; readonly atMeasureStart?: () => void },
): Promise<LoadResult> {
  const pid = o.watchPid;
  const sampler = pid === undefined ? undefined : new RssSampler(pid).start();
  let cpuBefore: number | undefined;
  const measuring = setTimeout(() => {
    cpuBefore = pid === undefined ? undefined : cpuTimeMs(pid);
    o.atMeasureStart?.();
  }, o.warmUpSeconds * 1000);
  let out: Awaited<ReturnType<typeof run>>;
  try {
    out = await run([`-c${connections}`, `-D${seconds}`, `--warm-up-time=${o.warmUpSeconds}`], url, (o.warmUpSeconds + seconds + 60) * 1000);
  } finally {
    clearTimeout(measuring);
    sampler?.stop();
  }
  const cpuAfter = pid === undefined ? undefined : cpuTimeMs(pid);
  const s = h2loadSummary(out.stdout);
  // Sorted once, fastest first: the percentiles and the slowest answers both read it.
  const answered = out.rows.filter((r) => r.status > 0).sort((a, b) => a.us - b.us);
  const lat = answered.map((r) => r.us / 1000);
  const requests = out.rows.length;
  return {
    url,
    connections,
    seconds,
    requests,
    reqPerSec: requests / seconds,
    p50: percentile(lat, 50),
    p90: percentile(lat, 90),
    p99: percentile(lat, 99),
    p999: percentile(lat, 99.9),
    max: lat.at(-1) ?? Number.NaN,
    mean: lat.reduce((a, b) => a + b, 0) / (lat.length || 1),
    non2xx: answered.filter((r) => r.status >= 400).length,
    // h2load's `failed` counts answers of 4xx/5xx too: those are non2xx here.
    errors: s.errored + s.timeout,
    ...(cpuBefore !== undefined && cpuAfter !== undefined && requests > 0 ? { cpuUsPerRequest: ((cpuAfter - cpuBefore) * 1000) / requests } : {}),
    ...(sampler ? { peakRssMiB: sampler.peakMiB } : {}),
    ...(out.rows.length ? { fromMs: periodStartUs(out.rows) / 1000 } : {}),
    slowest: slowest(answered),
  };
}

/** The measured period's start: the first request logged, µs since the epoch. */
function periodStartUs(rows: readonly { startUs: number }[]): number {
  return rows.reduce((m, r) => Math.min(m, r.startUs), Infinity);
}

/** The five slowest of `rows` (sorted fastest first), s after the first request logged (the measured period's start). */
function slowest(rows: readonly { startUs: number; us: number }[]): { atS: number; ms: number; startMs: number }[] {
  const t0 = periodStartUs(rows);
  return rows
    .slice(-5)
    .reverse()
    .map((r) => ({ atS: (r.startUs - t0) / 1e6, ms: r.us / 1000, startMs: r.startUs / 1000 }));
}

/** What `connections` connections opened at the same moment waited for their first answer, ms: the longest of `rounds` rounds, and its median. */
export interface OpeningResult {
  readonly connections: number;
  readonly rounds: number;
  readonly max: number;
  readonly p50: number;
}

/**
 * Opens `connections` connections to `url` at once, one request on each, `rounds` times: a
 * burst of new connections (load balancers reconnecting together), which a server pays for
 * apart from its answers on connections already open.
 */
export async function openingBurst(url: string, connections: number, rounds = 5): Promise<OpeningResult> {
  const lat: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const out = await run([`-c${connections}`, `-n${connections}`], url, 60_000);
    lat.push(...out.rows.filter((r) => r.status > 0).map((r) => r.us / 1000));
  }
  lat.sort((a, b) => a - b);
  return { connections, rounds, max: lat.at(-1) ?? Number.NaN, p50: percentile(lat, 50) };
}
