import { execFileSync } from 'node:child_process';
import { openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { setPriority } from 'node:os';

let ticksPerSecond: number | undefined;

/**
 * The numeric fields of /proc/<pid>/stat from the 3rd (state) on, index 0 being the 3rd field:
 * the command name before them is parenthesised and may hold spaces. Undefined once it is gone.
 */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

let ownSchedstat: number | undefined;
const schedstatBuf = Buffer.alloc(128);

/**
 * This process's main thread's own CPU so far, ms: /proc/thread-self/schedstat, opened at the
 * first call (from the main thread, whose file it stays) and read again at each; the kernel
 * brings it up to date whenever the thread sleeps.
 */
export function mainThreadCpuMs(): number {
  ownSchedstat ??= openSync('/proc/thread-self/schedstat', 'r');
  return Number(schedstatBuf.toString('latin1', 0, readSync(ownSchedstat, schedstatBuf, 0, schedstatBuf.length, 0)).split(' ')[0]) / 1e6;
}

/** CPU time (user + system) a process has used so far, ms; undefined once it is gone. */
export function cpuTimeMs(pid: number): number | undefined {
  ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  const fields = statFields(pid);
  // utime and stime are the 14th and 15th fields.
  return fields === undefined ? undefined : ((Number(fields[11]) + Number(fields[12])) / ticksPerSecond) * 1000;
}

/** A thread's scheduler figures so far (/proc/<pid>/task/<tid>/schedstat), ms: time on a CPU and time runnable but waiting for one. */
export interface SchedFigures {
  readonly onCpuMs: number;
  readonly waitMs: number;
}

/** The main thread's (tid = pid) scheduler figures; undefined once it is gone or where the kernel keeps none. */
export function schedFigures(pid: number): SchedFigures | undefined {
  try {
    const [run, wait] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').trim().split(/\s+/).map(Number);
    return run === undefined || wait === undefined || Number.isNaN(run + wait) ? undefined : { onCpuMs: run / 1e6, waitMs: wait / 1e6 };
  } catch {
    return undefined;
  }
}

/** One record of bench/lib/cpu-bursts-preload.mjs: a stretch of CPU between two timer turns, a count of turns, a garbage collection or a process start. */
export type CpuBurst =
  | {
      readonly kind: 'burst';
      /** Epoch ms at the end of the stretch. */
      readonly at: number;
      /** CPU of the whole process, other threads included. */
      readonly cpu_ms: number;
      /** CPU of the main thread alone (older records have none). */
      readonly main_ms?: number;
      /** Time the main thread was runnable but waited for a CPU (older records have none). */
      readonly wait_ms?: number;
      /** Times the main thread was put on a CPU in the stretch (older records have none). */
      readonly switches?: number;
      readonly wall_ms: number;
      /** The end on the monotonic clock a V8 CPU profile uses, µs. */
      readonly mono_us: number;
    }
  | { readonly kind: 'turns'; readonly at: number; readonly turns: number; readonly max_cpu_ms: number; readonly max_main_ms?: number }
  /** A garbage collection that ended at `at`, its pause `ms`. */
  | { readonly kind: 'gc'; readonly at: number; readonly gc: string; readonly ms: number }
  /** A process start that held the main thread `ms` (fork and exec), ending at `at`. */
  | { readonly kind: 'spawn'; readonly at: number; readonly mono_us: number; readonly file: string; readonly args?: readonly string[]; readonly ms: number };

/** A stretch of CPU between two timer turns. */
export type CpuStretch = Extract<CpuBurst, { kind: 'burst' }>;
/** A garbage collection and its pause. */
export type GcRecord = Extract<CpuBurst, { kind: 'gc' }>;
/** A process start. */
export type SpawnRecord = Extract<CpuBurst, { kind: 'spawn' }>;

/** The main thread's CPU of a stretch (the process's for records without it). */
export const mainMs = (b: CpuStretch): number => b.main_ms ?? b.cpu_ms;

/** The records a preloaded agent wrote (empty when it wrote none). */
export function readCpuBursts(path: string): CpuBurst[] {
  try {
    return readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as CpuBurst);
  } catch {
    return [];
  }
}

/**
 * Sets the scheduling priority of every thread of a process: Linux keeps a nice value per
 * thread, so setpriority() on the PID alone would leave the threads already started (V8's
 * helper, libuv's pool) where they were. Threads started later inherit it from their creator.
 */
export function reniceProcess(pid: number, nice: number): void {
  for (const tid of readdirSync(`/proc/${pid}/task`)) setPriority(Number(tid), nice);
}

/**
 * Keeps every process but the measured ones at `nice` 0 while `agentNice` is given to those:
 * what a reniced agent starts (PostgreSQL after a demotion, pg_ctl, its backends) inherits
 * the agent's priority, and would then compete at it. Scans /proc every `everyMs`; a child
 * runs at the agent's priority for at most that long.
 */
export class PriorityKeeper {
  private timer: NodeJS.Timeout | null = null;
  /** Processes put back to 0 so far. */
  reset = 0;

  constructor(
    private readonly agentNice: number,
    private readonly measured: () => ReadonlySet<number>,
    private readonly everyMs = 50,
  ) {}

  start(): this {
    this.timer = setInterval(() => this.scan(), this.everyMs);
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private scan(): void {
    const keep = this.measured();
    for (const name of readdirSync('/proc')) {
      const pid = Number(name);
      if (!Number.isInteger(pid) || pid === process.pid || keep.has(pid)) continue;
      // nice is the 19th field.
      const fields = statFields(pid);
      if (fields === undefined || Number(fields[16]) !== this.agentNice) continue;
      try {
        reniceProcess(pid, 0);
        this.reset++;
      } catch {
        // Gone meanwhile.
      }
    }
  }
}
