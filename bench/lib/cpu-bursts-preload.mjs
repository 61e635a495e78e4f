/**
 * Loaded into an agent by a benchmark (`node --import <this file>?dir=DIR ...`): how much CPU
 * was used between two turns of a 1 ms timer, two ways:
 *
 * - `main_ms`: the main thread's own CPU, from /proc/thread-self/schedstat (the kernel's
 *   sum_exec_runtime, in ns; it is brought up to date whenever the thread sleeps, which it does
 *   between two turns unless it is busy, so it is exact for a stretch that ends in a sleep and
 *   late by at most one scheduler tick otherwise). Time spent waiting for a CPU is not in it:
 *   this is what the agent's own code, its garbage collector's pauses and the system calls it
 *   makes (a fork included) hold the event loop for.
 * - `cpu_ms`: the whole process (`process.cpuUsage()`), V8's helper thread and libuv's pool
 *   included, so it can only overstate.
 * - `wait_ms`: the time the main thread was runnable but waited for a CPU (the kernel's
 *   run_delay, the second figure of the same file; exact, as the thread reads it on a CPU):
 *   of a stretch's wall time, what the machine, not the agent, held it for.
 * - `switches`: how many times the main thread was put on a CPU in the stretch (the file's third
 *   figure). What is left of the wall time besides `main_ms` and `wait_ms` the thread was off a
 *   CPU without waiting for one: asleep or blocked (a switch or more), or, with none, still on
 *   its CPU as this kernel saw it while the hypervisor ran something else (steal time, which a
 *   kernel with paravirtual time accounting counts in neither figure).
 *
 * Every stretch whose main-thread or process CPU reaches `min-ms` (default 1), or whose wall
 * time reaches `min-wall-ms` (default 5: the agent held off its CPU), is appended to
 * DIR/<pid>.jsonl, with a count of all turns every 5 s; a stretch is measured from the end of
 * the probe's own work in one turn to the next turn, so the probe's cost is not counted in it. So that a stretch can be told apart,
 * it also appends every garbage collection (`gc`: kind and pause, from perf_hooks) and every
 * process start (`spawn`: the file and how long `spawn` held the thread, fork and exec).
 * With `age=N` and node's `--expose-gc`, SIGUSR2 makes the agent run N full collections.
 *
 * Plain JavaScript: the benchmarks run the compiled agent, without a TypeScript loader.
 */
import { ChildProcess } from 'node:child_process';
import { appendFileSync, openSync, readSync } from 'node:fs';
import { PerformanceObserver, constants, performance } from 'node:perf_hooks';

const params = new URL(import.meta.url).searchParams;
const dir = params.get('dir');
if (dir) {
  const minNs = Number(params.get('min-ms') ?? '1') * 1e6;
  const minWallMs = Number(params.get('min-wall-ms') ?? '5');
  const out = `${dir}/${process.pid}.jsonl`;
  const onCpuNs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) * 1000;
  };
  // One descriptor read again at offset 0 into one small buffer: readFileSync of a /proc file
  // (size 0) would take a fresh 64 KiB buffer a turn, and the agent's private memory with it.
  const schedstat = openSync('/proc/thread-self/schedstat', 'r');
  const buf = Buffer.alloc(128);
  // [time on a CPU, time runnable and waiting for one (ns), times put on a CPU].
  const sched = () => {
    const n = readSync(schedstat, buf, 0, buf.length, 0);
    const f = buf.toString('latin1', 0, n).split(' ');
    return [Number(f[0]), Number(f[1]), Number(f[2])];
  };
  let lastCpu = onCpuNs();
  let [lastMain, lastWait, lastRuns] = sched();
  let lastWall = performance.now();
  let lastFlush = lastWall;
  let turns = 0;
  let maxNs = 0;
  let maxMainNs = 0;
  // Records wait in memory and are written every 5 s, by the timer below, outside every
  // measured stretch: a write where the agent's code runs (a GC record, a process start) would
  // count as the agent's own CPU.
  const pending = [];
  const write = (rec) => pending.push(JSON.stringify(rec));
  const flush = () => {
    if (pending.length === 0) return;
    appendFileSync(out, `${pending.join('\n')}\n`);
    pending.length = 0;
  };
  process.on('exit', flush);
  const stamp = () => ({ at: Date.now(), mono_us: Number(process.hrtime.bigint() / 1000n) });
  setInterval(() => {
    const cpu = onCpuNs();
    const [main, waited, runs] = sched();
    const wall = performance.now();
    const ns = cpu - lastCpu;
    const own = main - lastMain;
    const wallMs = wall - lastWall;
    turns++;
    if (ns > maxNs) maxNs = ns;
    if (own > maxMainNs) maxMainNs = own;
    // `at` is the end of the stretch (epoch ms); mono_us matches a V8 CPU profile's clock.
    if (ns >= minNs || own >= minNs || wallMs >= minWallMs) write({ kind: 'burst', ...stamp(), cpu_ms: ns / 1e6, main_ms: own / 1e6, wait_ms: (waited - lastWait) / 1e6, switches: runs - lastRuns, wall_ms: wallMs });
    if (wall - lastFlush >= 5000) {
      write({ kind: 'turns', at: Date.now(), turns, max_cpu_ms: maxNs / 1e6, max_main_ms: maxMainNs / 1e6 });
      turns = 0;
      maxNs = 0;
      maxMainNs = 0;
      lastFlush = wall;
      flush();
    }
    // The next stretch starts after the probe's own work.
    lastCpu = onCpuNs();
    [lastMain, lastWait, lastRuns] = sched();
    lastWall = performance.now();
  }, 1).unref();
  // Node's kinds (perf_hooks.constants.NODE_PERFORMANCE_GC_*): a forced or finished full
  // collection is MAJOR, a marking step INCREMENTAL.
  const GC_KINDS = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak-callbacks',
  };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.duration < 0.5) continue;
      write({ kind: 'gc', at: Math.round(performance.timeOrigin + e.startTime + e.duration), gc: GC_KINDS[e.detail?.kind] ?? String(e.detail?.kind), ms: e.duration });
    }
  }).observe({ entryTypes: ['gc'] });
  // `age=N` (with node's --expose-gc): SIGUSR2 runs N full collections, as weeks of a
  // long-running agent would (V8 drops the bytecode of a function not run for five).
  const age = Number(params.get('age') ?? '0');
  // Handled whenever asked for, so that the signal never ends an agent started without the flag.
  if (age > 0) {
    process.on('SIGUSR2', () => {
      if (typeof globalThis.gc === 'function') for (let i = 0; i < age; i++) globalThis.gc();
    });
  }
  const spawn = ChildProcess.prototype.spawn;
  ChildProcess.prototype.spawn = function timedSpawn(options) {
    const t0 = performance.now();
    try {
      return spawn.call(this, options);
    } finally {
      write({ kind: 'spawn', ...stamp(), file: String(options?.file ?? ''), args: (options?.args ?? []).slice(1, 8).map(String), ms: performance.now() - t0 });
    }
  };
}
