/**
 * The chaos suite on real processes: `npm run test:chaos` runs every scenario in asynchronous
 * mode and the data-safety ones again in synchronous and in quorum mode, then prints a table of figures;
 * `-- --quick` runs the short subset `npm test` runs; `-- --only "agent frozen;..."` picks
 * scenarios (`--sync` or `--quorum` with it: in that mode only); `--keep` keeps the cluster's
 * folder (logs) of a run that passed; `WARDEN_CHAOS_LOG_LEVEL=debug` sets the agents' log level.
 * Exit code 1 when a check failed.
 *
 * It runs in two steps: this process (in the machine's own namespace) builds the lab of
 * network namespaces, then runs itself with `--inner` inside the lab's client namespace,
 * where the cluster is started and broken; whatever happens, the lab is removed afterwards
 * (its processes stopped by PID, its namespaces deleted), also on Ctrl-C.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chaosRunner, sql, waitConverged, addresses, type LabHosts } from './chaos-cluster.js';
import { Lab, labUnavailable } from './lab.js';
import { QUICK_SCENARIOS, runScenarios, SCENARIOS, setSynchronous, SYNC_SCENARIOS, type ChaosContext, type ScenarioResult } from './scenarios.js';

const SELF = fileURLToPath(import.meta.url);
const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const option = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

const log = (line: string) => process.stdout.write(`[chaos ${new Date().toISOString().slice(11, 23)}] ${line}\n`);

/** The table of figures the suite prints. */
function table(results: readonly ScenarioResult[]): string {
  const ms = (v: number | null) => (v === null ? '-' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : `${v} ms`);
  const rows = [
    ['scenario', 'mode', 'fault to new primary writing', 'overlap of two writable', 'old primary stopped before key moved', 'heal to streaming', 'longest write gap', 'acked', 'lost', 'diverged node healthy', 'converged', 'result', 'notes'],
    ...results.map((r) => [
      r.name,
      r.mode,
      ms(r.failoverMs),
      `${r.overlapMs} ms`,
      ms(r.lastAckBeforeKeyMovedMs),
      ms(r.healToStreamingMs),
      ms(r.writeGapMs),
      String(r.acked),
      String(r.lost),
      String(r.untrustworthyHealthy),
      r.converged ? 'yes' : 'NO',
      r.failures.length ? 'FAIL' : 'ok',
      r.notes.join('; '),
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows.map((row) => row.map((c, i) => c.padEnd(widths[i]!)).join(' | ')).join('\n');
}

/** Inside the client namespace: start the cluster, run the scenarios, print the table. */
async function inner(): Promise<number> {
  const hosts = JSON.parse(option('--hosts')!) as LabHosts;
  const runner = chaosRunner(hosts, option('--dir'));
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await runner.down().catch(() => undefined);
  };
  process.on('SIGINT', () => void stop().then(() => process.exit(130)));
  process.on('SIGTERM', () => void stop().then(() => process.exit(143)));
  try {
    runner.prepare(false);
    await runner.startEtcd();
    for (const n of runner.layout.nodes) runner.startAgent(n.name);
    const primary = await waitConverged(runner, 240_000);
    await sql(addresses(runner).find((n) => n.name === primary)!, 'CREATE TABLE IF NOT EXISTS chaos_writes (id bigint PRIMARY KEY, node text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())');
    log(`cluster up: primary ${primary}; logs under ${runner.layout.dir}/logs`);
    // Names hold commas ("two etcd members stopped, failsafe off"): several are separated by semicolons.
    const only = option('--only')?.split(';').map((s) => s.trim());
    const asyncNames = only ?? (flag('--quick') ? QUICK_SCENARIOS : Object.keys(SCENARIOS));
    const syncNames = only ? (flag('--sync') ? only : []) : flag('--quick') ? [] : SYNC_SCENARIOS;
    const quorumNames = only ? (flag('--quorum') ? only : []) : flag('--quick') ? [] : SYNC_SCENARIOS;
    const base = { runner, etcd: hosts.etcd, nodes: hosts.nodes, log };
    const results: ScenarioResult[] = [];
    if (!(only && (flag('--sync') || flag('--quorum')))) results.push(...(await runScenarios({ ...base, mode: 'async' } satisfies ChaosContext, asyncNames)));
    for (const [mode, names] of [['sync', syncNames], ['quorum', quorumNames]] as const) {
      if (!names.length) continue;
      const ctx: ChaosContext = { ...base, mode };
      await setSynchronous(ctx, mode === 'sync' ? true : 'quorum');
      results.push(...(await runScenarios(ctx, names)));
      await setSynchronous(ctx, false);
    }
    process.stdout.write(`\n${table(results)}\n\n`);
    const failed = results.filter((r) => r.failures.length);
    for (const r of failed) process.stdout.write(`FAILED ${r.name} (${r.mode}): ${r.failures.join('; ')}\n`);
    process.stdout.write(failed.length ? `chaos: ${failed.length} of ${results.length} scenarios failed\n` : `chaos: all ${results.length} scenarios passed\n`);
    return failed.length ? 1 : 0;
  } finally {
    await stop();
  }
}

/** In the machine's namespace: build the lab, run the inner step inside it, remove the lab. */
async function outer(): Promise<number> {
  const why = labUnavailable();
  if (why) {
    process.stdout.write(`chaos suite skipped: ${why}\n`);
    return 0;
  }
  const lab = await Lab.create(['etcd1', 'etcd2', 'etcd3', 'node1', 'node2', 'node3']);
  const hosts: LabHosts = { etcd: lab.hosts.filter((h) => h.name.startsWith('etcd')), nodes: lab.hosts.filter((h) => h.name.startsWith('node')) };
  const runner = chaosRunner(hosts);
  const dir = runner.layout.dir;
  let keep = flag('--keep');
  const cleanup = () => {
    lab.destroy();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', cleanup);
  const child = spawn('ip', ['netns', 'exec', lab.client.netns, process.execPath, '--import', 'tsx', SELF, '--inner', '--hosts', JSON.stringify(hosts), '--dir', dir, ...args], { stdio: 'inherit' });
  // Ctrl-C reaches both processes; the inner one stops the cluster, then this one removes the lab.
  const onSignal = () => setTimeout(() => child.kill('SIGKILL'), 60_000).unref();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', () => {
    child.kill('SIGTERM');
    onSignal();
  });
  const code = await new Promise<number>((resolve) => child.once('exit', (c, s) => resolve(c ?? (s ? 1 : 0))));
  // A failed run keeps its logs (agents, fencers, PostgreSQL, etcd) for a look.
  if (code !== 0) {
    keep = true;
    process.stdout.write(`chaos: logs kept under ${dir}\n`);
  }
  cleanup();
  return code;
}

const code = flag('--inner') ? await inner() : await outer();
process.exit(code);
