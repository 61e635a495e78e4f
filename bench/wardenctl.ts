/**
 * How long one wardenctl call takes, start to exit, as an operator types it: the compiled
 * CLI (a throw-away build, as an installed package runs it) against a real etcd holding a
 * 3-member cluster, each command run N times in turn. Wall time per process, so it includes
 * starting Node.
 *
 *   node --import tsx bench/wardenctl.ts [--runs 20]
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { memberToJson } from '../src/adapters/cluster-store/codec.js';
import { Etcd3GatewayKeyValue } from '../src/adapters/cluster-store/etcd3-gateway-key-value.js';
import { startEtcd } from '../test/support/etcd-server.js';
import { onCleanup, runBenchmark } from './lib/cleanup.js';
import { compiledCopy } from './lib/compiled-copy.js';
import { atMost, fmt, printTable, progress, type Row } from './lib/report.js';
import { max, median, percentile } from './lib/stats.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20' } } });
const runs = Number(values.runs);

/** Goal of one call on an idle demo-sized cluster. */
const GOAL_MS = 350;

await runBenchmark(async () => {
  progress('building a compiled copy of the package');
  const pkg = await compiledCopy();
  const etcd = await startEtcd();
  onCleanup(() => etcd.cleanup());
  const kv = new Etcd3GatewayKeyValue({ hosts: [etcd.host], prefix: '/service/demo/', retryTimeoutMs: 5000 });
  await kv.put('initialize', '7300000000000000001');
  await kv.put('config', JSON.stringify({ ttl: 30, loop_wait: 10, retry_timeout: 10 }));
  await kv.put('leader', 'node1');
  await kv.put('status', JSON.stringify({ optime: 67108960, slots: {} }));
  for (const n of [1, 2, 3]) {
    await kv.put(
      `members/node${n}`,
      memberToJson({
        connUrl: `postgres://127.0.0.1:${15431 + n}/postgres`, apiUrl: `http://127.0.0.1:${8007 + n}`, state: 'running',
        role: n === 1 ? 'primary' : 'replica', version: '1', xlogLocation: n === 1 ? 67108960 : null,
        receiveLsn: n === 1 ? null : 67108960, replayLsn: n === 1 ? null : 67108864, replicationState: n === 1 ? null : 'streaming',
        timeline: 1, tags: {}, pendingRestart: false, pendingRestartReason: null, scheduledRestart: null,
      }),
    );
  }
  await kv.close();

  const bin = join(pkg, 'bin', 'wardenctl.js');
  const commands: [string, string[]][] = [
    ['list', ['-d', etcd.host, '--scope', 'demo', 'list']],
    ['list -f json', ['-d', etcd.host, '--scope', 'demo', 'list', '-f', 'json']],
    ['topology', ['-d', etcd.host, '--scope', 'demo', 'topology']],
    ['show-config', ['-d', etcd.host, '--scope', 'demo', 'show-config']],
    ['dsn', ['-d', etcd.host, '--scope', 'demo', 'dsn']],
    ['--version', ['--version']],
  ];
  const times = new Map(commands.map(([name]) => [name, [] as number[]]));
  // One warm-up round: the page cache holds the package afterwards, as on a host in use.
  for (const [, args] of commands) spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
  for (let i = 0; i < runs; i++) {
    for (const [name, args] of commands) {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' });
      const ms = performance.now() - t0;
      if (r.status !== 0) throw new Error(`wardenctl ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
      times.get(name)!.push(ms);
    }
  }
  const node: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    spawnSync(process.execPath, ['-e', '0']);
    node.push(performance.now() - t0);
  }
  const rows: Row[] = [...times].map(([name, xs]) => ({
    figure: `wardenctl ${name}, median`,
    value: median(xs),
    unit: 'ms',
    goal: atMost(GOAL_MS),
    note: `p90 ${fmt(percentile(xs, 90))} ms, max ${fmt(max(xs))} ms`,
  }));
  rows.push({ figure: 'node -e 0 (floor), median', value: median(node), unit: 'ms', note: `p90 ${fmt(percentile(node, 90))} ms` });
  printTable(`wardenctl call time (${runs} runs each, compiled, real etcd, 3 members)`, rows);
});
