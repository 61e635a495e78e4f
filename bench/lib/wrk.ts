import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { cpuTimeMs } from './cpu.js';
import type { LoadResult } from './load-result.js';
import { RssSampler } from './rss.js';

/** wrk (C, one thread): a load generator that costs the machine far less per request than the servers it drives. */
export const WRK = process.env['WRK'] ?? '/usr/bin/wrk';

/** True when wrk is installed (Debian package wrk). */
export function wrkInstalled(): boolean {
  return existsSync(WRK);
}

// wrk's Lua `done` hook: the figures as one JSON line, latencies in microseconds (wrk's own unit).
const REPORT_LUA = `
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK_JSON {"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d,"max":%d,"mean":%.1f}\\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9), latency.max, latency.mean))
end
`;


let luaDir: string | undefined;

/** The report script, written once per process. */
function reportScript(): string {
  if (!luaDir) {
    luaDir = mkdtempSync(join(tmpdir(), 'warden-bench-wrk-'));
    const dir = luaDir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(luaDir, 'report.lua'), REPORT_LUA);
  }
  return join(luaDir, 'report.lua');
}

/**
 * Drives `url` with wrk (one thread, `connections` keep-alive connections, each sending its
 * next request as soon as the last one is answered) for `seconds`; samples `watchPid`'s CPU
 * time and RSS meanwhile.
 */
export async function wrkLoad(url: string, connections: number, seconds: number, watchPid?: number): Promise<LoadResult> {
  const sampler = watchPid === undefined ? undefined : new RssSampler(watchPid).start();
  const cpuBefore = watchPid === undefined ? undefined : cpuTimeMs(watchPid);
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)(WRK, ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '5s', '-s', reportScript(), url], {
      maxBuffer: 4 * 1024 * 1024,
      timeout: (seconds + 60) * 1000,
    }));
  } finally {
    sampler?.stop();
  }
  const cpuAfter = watchPid === undefined ? undefined : cpuTimeMs(watchPid);
  const line = stdout.split('\n').find((l) => l.startsWith('WRK_JSON '));
  if (!line) throw new Error(`wrk printed no report for ${url}: ${stdout.slice(0, 500)}`);
  const r = JSON.parse(line.slice('WRK_JSON '.length)) as Record<string, number>;
  const requests = r['requests']!;
  const ms = (k: string) => r[k]! / 1000;
  return {
    url,
    connections,
    seconds,
    requests,
    reqPerSec: requests / (r['duration_us']! / 1e6),
    p50: ms('p50'),
    p90: ms('p90'),
    p99: ms('p99'),
    p999: ms('p999'),
    max: ms('max'),
    mean: ms('mean'),
    non2xx: r['status']!,
    errors: r['connect']! + r['read']! + r['write']! + r['timeout']!,
    ...(cpuBefore !== undefined && cpuAfter !== undefined && requests > 0 ? { cpuUsPerRequest: ((cpuAfter - cpuBefore) * 1000) / requests } : {}),
    ...(sampler ? { peakRssMiB: sampler.peakMiB } : {}),
  };
}
