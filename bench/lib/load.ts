import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { cpuTimeMs } from './cpu.js';
import { RssSampler } from './rss.js';

const autocannonBin = join(dirname(createRequire(import.meta.url).resolve('autocannon/package.json')), 'autocannon.js');

/** What one load run measured. Latencies in ms (autocannon's histogram has 1 ms resolution). */
export interface LoadResult {
  readonly url: string;
  readonly connections: number;
  readonly seconds: number;
  readonly reqPerSec: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly total: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly non2xx: number;
  /** Peak RSS of the watched process during the run, MiB. */
  readonly peakRssMiB?: number;
  /** CPU time the watched process used per request served, µs (10 ms clock-tick resolution over the run). */
  readonly cpuUsPerRequest?: number;
}

interface AutocannonJson {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; max: number };
  errors: number;
  timeouts: number;
  non2xx: number;
  duration: number;
}

/**
 * Drives `url` with autocannon (keep-alive connections) in a child process, so the load
 * generator does not share this process's event loop; samples `watchPid`'s RSS meanwhile.
 */
export async function loadTest(url: string, connections: number, seconds: number, watchPid?: number): Promise<LoadResult> {
  const sampler = watchPid === undefined ? undefined : new RssSampler(watchPid).start();
  const cpuBefore = watchPid === undefined ? undefined : cpuTimeMs(watchPid);
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [autocannonBin, '-c', String(connections), '-d', String(seconds), '-j', url], {
      maxBuffer: 16 * 1024 * 1024,
      timeout: (seconds + 60) * 1000,
    });
    const r = JSON.parse(stdout.trim().split('\n').pop()!) as AutocannonJson;
    const cpuAfter = watchPid === undefined ? undefined : cpuTimeMs(watchPid);
    const cpuUsPerRequest = cpuBefore !== undefined && cpuAfter !== undefined && r.requests.total > 0 ? ((cpuAfter - cpuBefore) * 1000) / r.requests.total : undefined;
    return {
      url,
      connections,
      seconds,
      reqPerSec: r.requests.total / (r.duration || seconds),
      p50: r.latency.p50,
      p99: r.latency.p99,
      max: r.latency.max,
      total: r.requests.total,
      errors: r.errors,
      timeouts: r.timeouts,
      non2xx: r.non2xx,
      ...(sampler ? { peakRssMiB: sampler.stop() } : {}),
      ...(cpuUsPerRequest !== undefined ? { cpuUsPerRequest } : {}),
    };
  } finally {
    sampler?.stop();
  }
}
