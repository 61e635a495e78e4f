/**
 * Deep runs of the randomized HA simulation.
 *   npx tsx test/sim/run.ts --runs 100000 [--seed 1 | --random] [--keep-going] [--profile quick|deep] [--model v1|...|v5]
 *     (--random: from a random first seed, printed, so every deep run explores new schedules)
 *   npx tsx test/sim/run.ts --replay 12345 [--profile quick] [--verbose] [--model v1|v2|v3|v4|v5]
 *     (one seed, with its event trace; --verbose adds every node's decision at every tick)
 *   --standby (with either): a standby cluster replicating from a remote primary
 * Exit code 1 when an invariant broke; every failing seed is printed for replay.
 */
import { CURRENT_FAULT_MODEL, FAULT_MODELS } from './faults.js';
import { runSchedule } from './simulation.js';
import { traceTicks } from './trace.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<number> {
  const profile = arg('profile') === 'quick' ? 'quick' : 'deep';
  const standby = process.argv.includes('--standby');
  const replay = arg('replay');
  const named = arg('model');
  const model = FAULT_MODELS.find((m) => m === named) ?? CURRENT_FAULT_MODEL;
  if (replay !== undefined) {
    if (process.argv.includes('--verbose')) traceTicks();
    const r = await runSchedule(Number(replay), { profile, model, standby, trace: (line) => console.log(line) });
    console.log(r.ok ? `seed ${r.seed}: ok` : `seed ${r.seed}: VIOLATION\n${r.violation}`);
    return r.ok ? 0 : 1;
  }
  const runs = Number(arg('runs') ?? 2000);
  const first = process.argv.includes('--random') ? 1_000_000 + Math.floor(Math.random() * 2_000_000_000) : Number(arg('seed') ?? 1);
  console.log(`seeds ${first}..${first + runs - 1} (${profile} profile, fault model ${model}${standby ? ', standby cluster' : ''})`);
  const keepGoing = process.argv.includes('--keep-going');
  const started = Date.now();
  const failed: number[] = [];
  let changes = 0;
  let undone = 0;
  let writes = 0;
  let simulated = 0;
  for (let i = 0; i < runs; i++) {
    const r = await runSchedule(first + i, { profile, model, standby });
    changes += r.leaderChanges;
    undone += r.promotionsUndone;
    writes += r.acknowledgedWrites;
    simulated += r.simulatedMs;
    if (!r.ok) {
      failed.push(r.seed);
      console.log(`seed ${r.seed}: VIOLATION (replay: npx tsx test/sim/run.ts --replay ${r.seed}${model !== CURRENT_FAULT_MODEL ? ` --model ${model}` : ''}${standby ? ' --standby' : ''})\n${r.violation}\n`);
      if (!keepGoing) break;
    }
    if ((i + 1) % 1000 === 0) {
      const secs = (Date.now() - started) / 1000;
      console.log(`${i + 1} schedules, ${(((i + 1) / secs) || 0).toFixed(0)}/s, ${failed.length} failing`);
    }
  }
  const secs = (Date.now() - started) / 1000;
  const done = failed.length && !keepGoing ? first + runs - 1 : runs;
  console.log(
    `ran ${Math.min(done, runs)} schedules (seeds ${first}..${first + runs - 1}) in ${secs.toFixed(1)} s ` +
      `(${(runs / secs).toFixed(0)} schedules/s), ${(simulated / 3_600_000).toFixed(1)} h of cluster time, ` +
      `${changes} leader changes, ${undone} promotions undone by fencers, ${writes} acknowledged writes; failing seeds: ${failed.length ? failed.join(', ') : 'none'}`,
  );
  return failed.length ? 1 : 0;
}

process.exitCode = await main();
