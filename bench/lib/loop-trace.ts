import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** One turn of an event loop: from the return of its wait for I/O (epoll_pwait) to its next call. */
export interface LoopIteration {
  /** Start and end, µs of CLOCK_MONOTONIC (process.hrtime's clock). */
  readonly startUs: number;
  readonly endUs: number;
  /** Of that, how long the thread was on a CPU, µs (not the time it waited for one). */
  readonly onCpuUs: number;
}

/** A running kernel trace of some processes' main threads; `stop()` ends it and reads their iterations. */
export interface LoopTrace {
  stop(): Promise<Map<number, LoopIteration[]>>;
  /** Ends the trace without reading it (a benchmark that failed); nothing once it ended. */
  kill(): void;
}

/** Why a trace cannot run here; null when it can (`perf` installed, tracepoints readable). */
export function loopTraceUnavailable(): string | null {
  const r = spawnSync('perf', ['list', 'syscalls:sys_enter_epoll_pwait'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return 'perf is not installed (Debian: linux-perf)';
  if (!r.stdout.includes('sys_enter_epoll_pwait')) return 'the kernel gives perf no syscall tracepoints (run as root, tracefs mounted)';
  return null;
}

/**
 * Starts the kernel's trace of the main threads of `pids` (tid = pid): each call and return of
 * epoll_pwait, and each time the thread goes on or off a CPU, into `file` (perf.data).
 * What runs between two waits for I/O is what a health-check request that arrives meanwhile
 * waits behind, whatever it is (a tick's code, another request, a callback, a collection): the
 * event loop's own measure of "blocked", which a timer-based probe only brackets.
 */
export async function startLoopTrace(pids: readonly number[], file: string): Promise<LoopTrace> {
  const any = (field: string) => pids.map((p) => `${field} == ${p}`).join(' || ');
  const args = ['record', '-q', '-a', '-k', 'CLOCK_MONOTONIC', '-o', file];
  args.push('-e', 'syscalls:sys_enter_epoll_pwait', '--filter', any('common_pid'));
  args.push('-e', 'syscalls:sys_exit_epoll_pwait', '--filter', any('common_pid'));
  args.push('-e', 'sched:sched_switch', '--filter', `${any('prev_pid')} || ${any('next_pid')}`);
  const perf: ChildProcess = spawn('perf', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  perf.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => perf.on('exit', (code) => resolve(code)));
  // perf opens its events within a few hundred ms; a failure (bad filter, no permission) exits at once.
  const early = await Promise.race([exited, new Promise<'running'>((r) => setTimeout(() => r('running'), 1500))]);
  if (early !== 'running') throw new Error(`perf record exited (${early}): ${stderr.trim()}`);
  return {
    async stop() {
      perf.kill('SIGINT');
      await exited;
      return readIterations(file, new Set(pids));
    },
    kill() {
      if (perf.exitCode === null && perf.signalCode === null) perf.kill('SIGINT');
    },
  };
}

/** Reads a trace written by startLoopTrace: each thread's iterations, in order. */
async function readIterations(file: string, tids: ReadonlySet<number>): Promise<Map<number, LoopIteration[]>> {
  const script = spawn('perf', ['script', '-i', file, '-F', 'tid,time,event,trace'], { stdio: ['ignore', 'pipe', 'ignore'] });
  const out = new Map<number, LoopIteration[]>();
  // Per thread: when it went on a CPU (null: off), when its current iteration began, its on-CPU time so far.
  const state = new Map<number, { onSince: number | null; startUs: number | null; cpu: number }>();
  for (const t of tids) {
    out.set(t, []);
    state.set(t, { onSince: null, startUs: null, cpu: 0 });
  }
  const line = /^\s*(\d+)\s+([\d.]+):\s+(\S+):\s*(.*)$/;
  for await (const text of createInterface({ input: script.stdout })) {
    const m = line.exec(text);
    if (!m) continue;
    const tid = Number(m[1]);
    const at = Math.round(Number(m[2]) * 1e6);
    const event = m[3]!;
    if (event === 'sched:sched_switch') {
      const prev = Number(/prev_pid=(\d+)/.exec(m[4]!)?.[1]);
      const next = Number(/next_pid=(\d+)/.exec(m[4]!)?.[1]);
      const off = state.get(prev);
      if (off && off.onSince !== null) {
        if (off.startUs !== null) off.cpu += at - Math.max(off.onSince, off.startUs);
        off.onSince = null;
      }
      const on = state.get(next);
      if (on) on.onSince = at;
      continue;
    }
    const s = state.get(tid);
    if (!s) continue;
    // An event of the thread itself: it is on a CPU (also when it was before the trace began).
    s.onSince ??= at;
    if (event === 'syscalls:sys_exit_epoll_pwait') {
      s.startUs = at;
      s.cpu = 0;
    } else if (event === 'syscalls:sys_enter_epoll_pwait' && s.startUs !== null) {
      s.cpu += at - Math.max(s.onSince, s.startUs);
      out.get(tid)!.push({ startUs: s.startUs, endUs: at, onCpuUs: s.cpu });
      s.startUs = null;
    }
  }
  return out;
}

/** CLOCK_MONOTONIC now, µs, and the wall clock (ms) at that moment: maps one to the other. */
export function monotonicNow(): { readonly monoUs: number; readonly wallMs: number } {
  return { monoUs: Number(process.hrtime.bigint() / 1000n), wallMs: Date.now() };
}
