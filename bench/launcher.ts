/**
 * What starting a command costs the agent's event loop, the two ways it can: through the
 * launcher shell (how the agent starts PostgreSQL's tools, callbacks and scripts) and by
 * forking itself (`execFile`, as it did before). The process first grows to about an agent's
 * private memory under load (a fork's cost grows with it); then, alternately, each way runs `/bin/true`
 * `--runs` times, one after the other with a 5 ms pause, while a 1 ms timer reads the main
 * thread's own CPU between two of its turns (/proc/thread-self/schedstat, as the health
 * benchmark's `--cpu-bursts` probe). Prints the stretches over 1 ms and 2 ms, the longest, and
 * the time from asking to the command's end.
 *
 *   node --import tsx bench/launcher.ts [--runs 60] [--rounds 2] [--private-mib 40]
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { runCommand } from '../src/adapters/database/run-command.js';
import { runBenchmark } from './lib/cleanup.js';
import { mainThreadCpuMs } from './lib/cpu.js';
import { atMost, printTable, progress, type Row } from './lib/report.js';
import { max, median, percentile } from './lib/stats.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '60' }, rounds: { type: 'string', default: '2' }, 'private-mib': { type: 'string', default: '40' } } });
const runs = Number(values.runs);
const rounds = Number(values.rounds);
const privateMiB = Number(values['private-mib']);

/** The process's private memory (RssAnon), MiB: what a fork copies the page tables of, with the heap. */
const privateNow = () => Number(/RssAnon:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;

type Way = 'launcher' | 'fork';

/** One way's figures over its rounds. */
interface Figures {
  readonly stretches: number[];
  readonly latencies: number[];
}

const start: Record<Way, () => Promise<unknown>> = {
  launcher: () => runCommand('/bin/true', [], { runAs: null, timeoutMs: 0 }),
  fork: () => new Promise((resolve, reject) => execFile('/bin/true', [], { cwd: '/' }, (e) => (e ? reject(e) : resolve(undefined)))),
};

await runBenchmark(async () => {
  // Touched buffers, to an agent's private memory after load: a fork copies their page tables.
  // Outside V8's heap, so no collection of them lands in a measured stretch.
  const kept: Buffer[] = [];
  while (privateNow() < privateMiB) kept.push(Buffer.alloc(1 << 20, 1));
  progress(`private memory ${privateNow().toFixed(0)} MiB (${kept.length} MiB of buffers kept)`);
  let last = mainThreadCpuMs();
  let current: number[] = [];
  const probe = setInterval(() => {
    const now = mainThreadCpuMs();
    current.push(now - last);
    last = mainThreadCpuMs();
  }, 1);
  const figures: Record<Way, Figures> = { launcher: { stretches: [], latencies: [] }, fork: { stretches: [], latencies: [] } };
  // The launcher's own start (one fork, once) is not what is measured.
  await start.launcher();
  for (let round = 0; round < rounds; round++) {
    for (const way of ['launcher', 'fork'] as const) {
      await new Promise((r) => setTimeout(r, 200));
      current = [];
      for (let i = 0; i < runs; i++) {
        const t0 = performance.now();
        await start[way]();
        figures[way].latencies.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 5));
      }
      figures[way].stretches.push(...current);
      const over = (ms: number) => current.filter((s) => s > ms).length;
      progress(`round ${round + 1}, ${way}: ${runs} commands, stretches over 1 ms ${over(1)}, over 2 ms ${over(2)}, longest ${max(current).toFixed(2)} ms`);
    }
  }
  clearInterval(probe);
  const rows: Row[] = [];
  for (const way of ['launcher', 'fork'] as const) {
    const f = figures[way];
    const n = runs * rounds;
    const label = way === 'launcher' ? 'through the launcher shell' : 'by forking the process (execFile)';
    rows.push(
      { figure: `${label}: main-thread stretches over 2 ms per 100 commands`, value: (f.stretches.filter((s) => s > 2).length * 100) / n, unit: '', ...(way === 'launcher' ? { goal: atMost(0) } : {}) },
      { figure: `${label}: stretches over 1 ms per 100 commands`, value: (f.stretches.filter((s) => s > 1).length * 100) / n, unit: '' },
      { figure: `${label}: longest stretch`, value: max(f.stretches), unit: 'ms' },
      { figure: `${label}: asked -> ended, median`, value: median(f.latencies), unit: 'ms', note: `p90 ${percentile(f.latencies, 90).toFixed(2)} ms, max ${max(f.latencies).toFixed(2)} ms` },
    );
  }
  printTable(`starting a command: /bin/true x ${runs * rounds} each way, at ${privateMiB} MiB private memory`, rows);
});
