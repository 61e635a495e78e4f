/**
 * Loaded into an agent by a benchmark (`node --import <this file>?dir=DIR ...`): how much CPU
 * the process used between two turns of a 1 ms timer (`process.cpuUsage()`, which the kernel
 * keeps to the nanosecond for the running thread; /proc's per-thread schedstat moves in whole
 * scheduler ticks, 4 ms here, too coarse for this). The event-loop delay counts time the
 * thread waited for a CPU as well; this does not, so it shows what the agent's own code (and
 * its garbage collector) holds the loop for. It counts the process's other threads too (V8's
 * one helper with the launcher's flags, libuv's pool), so it can only overstate. Every stretch of at least `min-ms` (default 1) is
 * appended to DIR/<pid>.jsonl, with a count of all turns every 5 s.
 *
 * Plain JavaScript: the benchmarks run the compiled agent, without a TypeScript loader.
 */
import { appendFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const params = new URL(import.meta.url).searchParams;
const dir = params.get('dir');
if (dir) {
  const minNs = Number(params.get('min-ms') ?? '1') * 1e6;
  const out = `${dir}/${process.pid}.jsonl`;
  const onCpuNs = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) * 1000;
  };
  let lastCpu = onCpuNs();
  let lastWall = performance.now();
  let turns = 0;
  let maxNs = 0;
  const write = (rec) => appendFileSync(out, `${JSON.stringify(rec)}\n`);
  setInterval(() => {
    const cpu = onCpuNs();
    const wall = performance.now();
    const ns = cpu - lastCpu;
    const wallMs = wall - lastWall;
    lastCpu = cpu;
    lastWall = wall;
    turns++;
    if (ns > maxNs) maxNs = ns;
    // `at` is the end of the stretch (epoch ms); mono_us matches a V8 CPU profile's clock.
    if (ns >= minNs) write({ kind: 'burst', at: Date.now(), mono_us: Number(process.hrtime.bigint() / 1000n), cpu_ms: ns / 1e6, wall_ms: wallMs });
  }, 1).unref();
  setInterval(() => {
    write({ kind: 'turns', at: Date.now(), turns, max_cpu_ms: maxNs / 1e6 });
    turns = 0;
    maxNs = 0;
  }, 5000).unref();
}
