/**
 * The local 3-node demo: `npm run demo [-- up|down|status|stop <node>|start <node>]`.
 * Starts one etcd and three agents on loopback, waits for a primary and two streaming
 * replicas, and prints `wardenctl list`. Everything lives under one folder
 * (WARDEN_DEMO_DIR, default $TMPDIR/warden-demo) and is stopped by PID.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { demoLayout, nodeConfigPath } from './lib/cluster-layout.js';
import { ClusterRunner } from './lib/cluster-runner.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const runner = new ClusterRunner(demoLayout());
const [command = 'up', arg] = process.argv.slice(2);

function wardenctl(...args: string[]): void {
  spawnSync(process.execPath, [join(repoRoot, 'bin/wardenctl.js'), '-c', nodeConfigPath(runner.layout, 'node1'), ...args], { stdio: 'inherit' });
}

async function up(): Promise<void> {
  if (runner.isRunning()) {
    console.log(`demo: already running (${runner.layout.dir}); 'npm run demo -- down' first, or 'status'`);
    wardenctl('list');
    return;
  }
  runner.prepare(true);
  console.log(`demo: data and logs in ${runner.layout.dir}`);
  await runner.startEtcd();
  console.log(`demo: etcd on 127.0.0.1:${runner.layout.etcdClientPort}`);
  for (const n of runner.layout.nodes) {
    runner.startAgent(n.name);
    console.log(`demo: ${n.name}: REST API 127.0.0.1:${n.apiPort}, PostgreSQL 127.0.0.1:${n.pgPort}`);
  }
  const primary = await runner.waitHealthy(180_000);
  console.log(`demo: healthy, ${primary} is the primary\n`);
  wardenctl('list');
  console.log(`\nTry: node bin/wardenctl.js -c ${nodeConfigPath(runner.layout, 'node1')} switchover --force`);
  console.log('Stop: npm run demo -- down');
}

async function main(): Promise<void> {
  switch (command) {
    case 'up':
      return up();
    case 'down':
      await runner.down();
      console.log('demo: stopped');
      return;
    case 'status':
      wardenctl('list');
      return;
    case 'stop':
      if (!arg) throw new Error('usage: npm run demo -- stop <node>');
      await runner.stopAgent(runner.node(arg).name);
      console.log(`demo: ${arg} stopped`);
      return;
    case 'start':
      if (!arg) throw new Error('usage: npm run demo -- start <node>');
      runner.startAgent(runner.node(arg).name);
      console.log(`demo: ${arg} started`);
      return;
    default:
      throw new Error(`unknown command '${command}' (up, down, status, stop <node>, start <node>)`);
  }
}

main().catch((e: Error) => {
  console.error(`demo: ${e.message}`);
  process.exit(1);
});
