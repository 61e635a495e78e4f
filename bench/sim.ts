/**
 * Speed of the randomized HA simulation (test/sim): random schedules of crashes, partitions,
 * DCS outages and operator commands against 3-5 simulated nodes on fake time, run one after
 * another from a fixed first seed for a fixed wall time (or a fixed count).
 *
 *   node --import tsx bench/sim.ts [--seconds 20] [--runs N] [--seed 1]
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { runSchedule, type ScheduleResult } from '../test/sim/simulation.js';
import { runBenchmark } from './lib/cleanup.js';
import { atMost, fmt, printTable, progress } from './lib/report.js';
import { mean, median, percentile } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '20' },
    runs: { type: 'string' },
    seed: { type: 'string', default: '1' },
  },
});
const budgetMs = Number(values.seconds) * 1000;
const maxRuns = values.runs === undefined ? Number.POSITIVE_INFINITY : Number(values.runs);
const firstSeed = Number(values.seed);

await runBenchmark(async () => {
  // A few schedules first: module loading and JIT stay out of the measured rate.
  for (let i = 0; i < 3; i++) await runSchedule(1_000_000 + i);
  const results: ScheduleResult[] = [];
  const wall: number[] = [];
  const t0 = performance.now();
  while (results.length < maxRuns && (values.runs !== undefined || performance.now() - t0 < budgetMs)) {
    const s0 = performance.now();
    results.push(await runSchedule(firstSeed + results.length));
    wall.push(performance.now() - s0);
  }
  const secs = (performance.now() - t0) / 1000;
  const failing = results.filter((r) => !r.ok).map((r) => r.seed);
  progress(`${results.length} schedules in ${secs.toFixed(1)} s; failing seeds: ${failing.length ? failing.join(', ') : 'none'}`);
  const simulatedH = results.reduce((a, r) => a + r.simulatedMs, 0) / 3_600_000;
  printTable(`HA simulation (seeds ${firstSeed}..${firstSeed + results.length - 1})`, [
    { figure: 'schedules per second', value: results.length / secs, unit: '/s', note: `${results.length} schedules in ${fmt(secs)} s` },
    { figure: 'wall time per schedule, median', value: median(wall), unit: 'ms', note: `p90 ${fmt(percentile(wall, 90))} ms` },
    { figure: 'events per schedule, mean', value: mean(results.map((r) => r.events)), unit: '', note: `nodes per schedule, mean ${fmt(mean(results.map((r) => r.nodes)))}` },
    { figure: 'leader changes per schedule, mean', value: mean(results.map((r) => r.leaderChanges)), unit: '' },
    { figure: 'simulated cluster time per wall second', value: (simulatedH * 3600) / secs, unit: 's', note: `${fmt(simulatedH)} h simulated in total` },
    { figure: 'schedules breaking an invariant', value: failing.length, unit: '', goal: atMost(0), note: failing.length ? `replay: npx tsx test/sim/run.ts --replay ${failing[0]}` : '' },
  ]);
});
