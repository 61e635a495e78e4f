/**
 * What looking for a data directory's PostgreSQL processes costs the agent's event loop on a
 * host with many processes. The agent does it before every start of its server (a switchover's
 * demoted primary too) and while it waits for a killed server's processes to go: every process
 * in /proc is asked for its working directory. For each `--processes` count N, N extra
 * processes (`sleep`) run beside this one; then, alternately, `--rounds` scans each way: the
 * agent's (a few processes at a time) and every process asked at once (how the agent did it
 * before), while a 1 ms timer reads the main thread's own CPU between two of its turns
 * (/proc/thread-self/schedstat). Prints each way's longest stretch, the main thread's CPU per
 * scan and the scan's wall time. With the agent's V8 flags (`npm run bench:proc-scan`).
 *
 *   node --import tsx bench/proc-scan.ts [--processes 500,2000] [--rounds 10]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { serverProcessesInDataDir } from '../src/adapters/database/data-dir-processes.js';
import { launcherNodeFlags } from '../src/app/agent/launcher-flags.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { mainThreadCpuMs } from './lib/cpu.js';
import { printTable, progress, type Row } from './lib/report.js';
import { max, median } from './lib/stats.js';

const { values } = parseArgs({ options: { processes: { type: 'string', default: '500,2000' }, rounds: { type: 'string', default: '10' } } });
const counts = values.processes.split(',').map(Number);
const rounds = Number(values.rounds);

// The npm script passes the agent's V8 flags by hand (node takes them before this file runs):
// refuse to measure with a set that has drifted from the agent launcher's.
const agentFlags = launcherNodeFlags(join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'warden.js'));
const missing = agentFlags.filter((f) => !process.execArgv.includes(f));
if (missing.length > 0) throw new Error(`run with the agent's V8 flags (npm run bench:proc-scan); missing: ${missing.join(' ')}`);

/** The scan as the agent ran it before: a request for every process in /proc, all issued in one turn. */
async function allAtOnce(dataDir: string): Promise<number[]> {
  const entries = await readdir('/proc').catch(() => [] as string[]);
  const found: number[] = [];
  await Promise.all(
    entries
      .filter((e) => /^\d+$/.test(e))
      .map(async (e) => {
        const cwd = await readlink(`/proc/${e}/cwd`).catch(() => null);
        if (cwd !== dataDir) return;
        const comm = await readFile(`/proc/${e}/comm`, 'utf8').catch(() => '');
        if (comm.trim() === 'postgres') found.push(Number(e));
      }),
  );
  return found;
}

type Way = 'a few at a time' | 'all at once';
const scan: Record<Way, (dir: string) => Promise<number[]>> = { 'a few at a time': serverProcessesInDataDir, 'all at once': allAtOnce };

/** One way's figures at one process count. */
interface Figures {
  readonly longest: number[];
  readonly cpu: number[];
  readonly wall: number[];
}

await runBenchmark(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'warden-proc-scan-'));
  // One shell per count starts the sleepers, in a process group of its own: this process holds
  // one handle, not N (N child-process objects in its heap would bring collections of their own).
  let group: ChildProcess | undefined;
  const stopGroup = () => {
    if (group?.pid !== undefined) process.kill(-group.pid, 'SIGKILL');
    group = undefined;
  };
  onCleanup(() => {
    stopGroup();
    rmSync(dir, { recursive: true, force: true });
  });
  let last = mainThreadCpuMs();
  let longest = 0;
  const probe = setInterval(() => {
    const now = mainThreadCpuMs();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  onCleanup(() => clearInterval(probe));
  const rows: Row[] = [];
  for (const n of counts) {
    stopGroup();
    group = spawn('/bin/sh', ['-c', `i=0; while [ $i -lt ${n} ]; do sleep 600 & i=$((i+1)); done; wait`], { stdio: 'ignore', detached: true });
    await new Promise((r) => setTimeout(r, 1500));
    const inProc = (await readdir('/proc')).filter((e) => /^\d+$/.test(e)).length;
    progress(`${n} extra processes running (${inProc} in /proc)`);
    const figures: Record<Way, Figures> = { 'a few at a time': { longest: [], cpu: [], wall: [] }, 'all at once': { longest: [], cpu: [], wall: [] } };
    for (let round = 0; round < rounds; round++) {
      for (const way of ['a few at a time', 'all at once'] as const) {
        await new Promise((r) => setTimeout(r, 30));
        longest = 0;
        last = mainThreadCpuMs();
        const c0 = mainThreadCpuMs();
        const t0 = performance.now();
        await scan[way](dir);
        const wall = performance.now() - t0;
        const cpu = mainThreadCpuMs() - c0;
        // The stretch in which the scan's last answer arrived ends at the timer's next turn.
        await new Promise((r) => setTimeout(r, 3));
        figures[way].longest.push(longest);
        figures[way].cpu.push(cpu);
        figures[way].wall.push(wall);
      }
    }
    for (const way of ['a few at a time', 'all at once'] as const) {
      const f = figures[way];
      progress(`${n} processes, ${way}: longest stretch ${median(f.longest).toFixed(2)} ms (max ${max(f.longest).toFixed(2)}), CPU ${median(f.cpu).toFixed(1)} ms, wall ${median(f.wall).toFixed(1)} ms (medians of ${rounds})`);
      const agent = way === 'a few at a time';
      rows.push(
        { figure: `${inProc} processes, ${agent ? "the agent's scan (a few at a time)" : 'every process asked at once (before)'}: longest stretch of a scan, median`, value: median(f.longest), unit: 'ms', note: `longest of all ${max(f.longest).toFixed(2)} ms; scans with a stretch over 2 ms: ${f.longest.filter((x) => x > 2).length} of ${rounds} (a young-generation collection can land in one)` },
        { figure: `${inProc} processes, ${agent ? "the agent's scan" : 'all at once'}: main-thread CPU per scan, median`, value: median(f.cpu), unit: 'ms', note: `wall time median ${median(f.wall).toFixed(1)} ms, max ${max(f.wall).toFixed(1)} ms` },
      );
    }
  }
  printTable(`looking for a data directory's PostgreSQL processes in /proc: ${rounds} scans each way per process count; stretch = main-thread CPU between two turns of a 1 ms timer`, rows);
});
