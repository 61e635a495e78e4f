import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor } from '../../scripts/lib/processes.js';

/** Heap figures of a Node process, MiB: where its private memory goes. */
export interface MemoryReport {
  readonly rss: number;
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly external: number;
  readonly arrayBuffers: number;
  /** V8 heap spaces by name: committed size. */
  readonly spaces: Readonly<Record<string, number>>;
  /** Threads of the process (a loader or logger worker thread has a heap of its own). */
  readonly threads: number;
}

// Preloaded with --import into the measured process: on SIGUSR2 it writes its memory figures.
const PROBE = `
import { writeFileSync, readFileSync } from 'node:fs';
import v8 from 'node:v8';
const mib = (b) => Math.round((b / 1048576) * 10) / 10;
process.on('SIGUSR2', () => {
  const m = process.memoryUsage();
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, mib(s.physical_space_size)]));
  const threads = Number(/Threads:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 0);
  writeFileSync(process.env.WARDEN_BENCH_MEMORY_REPORT, JSON.stringify({ rss: mib(m.rss), heapTotal: mib(m.heapTotal), heapUsed: mib(m.heapUsed), external: mib(m.external), arrayBuffers: mib(m.arrayBuffers), spaces, threads }));
});
`;

/** Writes the probe into `dir`; returns the node arguments that preload it and the report file. */
export function memoryProbe(dir: string): { nodeArgs: string[]; env: Record<string, string>; reportFile: string } {
  const file = join(dir, 'memory-probe.mjs');
  writeFileSync(file, PROBE);
  const reportFile = join(dir, 'memory-report.json');
  return { nodeArgs: ['--import', file], env: { WARDEN_BENCH_MEMORY_REPORT: reportFile }, reportFile };
}

/** Asks the probed process for a report (SIGUSR2) and reads it. */
export async function readMemoryReport(pid: number, reportFile: string): Promise<MemoryReport> {
  writeFileSync(reportFile, '');
  process.kill(pid, 'SIGUSR2');
  return waitFor('the memory report', 10_000, async () => {
    const text = existsSync(reportFile) ? readFileSync(reportFile, 'utf8') : '';
    return text ? (JSON.parse(text) as MemoryReport) : undefined;
  }, 100);
}
