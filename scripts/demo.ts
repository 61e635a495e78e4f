/**
 * The local 3-node demo: `npm run demo [-- up|down|status|standby|stop <node>|start <node>]`.
 * Starts one etcd and three agents on loopback, waits for a primary and two streaming
 * replicas, and prints `wardenctl list`. `standby` adds a 2-node standby cluster (scope
 * `demo-standby`) replicating from the demo's primary. Everything lives under one folder
 * (WARDEN_DEMO_DIR, default $TMPDIR/warden-demo; the standby cluster beside it) and is
 * stopped by PID.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { demoLayout, nodeConfigPath, standbyDemoLayout, type ClusterLayout } from './lib/cluster-layout.js';
import { ClusterRunner } from './lib/cluster-runner.js';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const runner = new ClusterRunner(demoLayout());
const [command = 'up', arg] = process.argv.slice(2);

function wardenctl(...args: string[]): void {
  wardenctlOf(runner.layout, 'node1', ...args);
}

function wardenctlOf(layout: ClusterLayout, node: string, ...args: string[]): void {
  spawnSync(process.execPath, [join(repoRoot, 'bin/wardenctl.js'), '-c', nodeConfigPath(layout, node), ...args], { stdio: 'inherit' });
}

/** The standby cluster's runner (its layout does not depend on where it replicates from once its files exist). */
function standbyRunner(remote = { host: '127.0.0.1', port: runner.layout.nodes[0]!.pgPort }): ClusterRunner {
  return new ClusterRunner(standbyDemoLayout(runner.layout, remote));
}

/** `standby`: a 2-node standby cluster of the running demo, following its current primary. */
async function standby(): Promise<void> {
  const sb = standbyRunner();
  if (sb.isRunning()) {
    console.log(`demo: the standby cluster is already running (${sb.layout.dir})`);
    wardenctlOf(sb.layout, 'standby1', 'list');
    return;
  }
  if (!runner.isRunning()) throw new Error("the demo is not running: 'npm run demo' first");
  const primary = await runner.waitHealthy(60_000);
  const remote = { host: '127.0.0.1', port: runner.node(primary).pgPort };
  const layout = standbyRunner(remote);
  layout.prepare(true);
  console.log(`demo: standby cluster '${layout.layout.scope}' replicating from ${primary} (127.0.0.1:${remote.port}); data in ${layout.layout.dir}`);
  for (const n of layout.layout.nodes) {
    layout.startAgent(n.name);
    console.log(`demo: ${n.name}: REST API 127.0.0.1:${n.apiPort}, PostgreSQL 127.0.0.1:${n.pgPort}`);
  }
  const leader = await layout.waitHealthy(180_000, undefined, 'standby_leader');
  console.log(`demo: standby cluster healthy, ${leader} is the standby leader\n`);
  wardenctlOf(layout.layout, 'standby1', 'list');
  console.log(`\nPromote it: node bin/wardenctl.js -c ${nodeConfigPath(layout.layout, 'standby1')} promote-cluster --force`);
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
    case 'down': {
      const sb = standbyRunner();
      if (sb.isRunning()) {
        await sb.down();
        console.log('demo: standby cluster stopped');
      }
      await runner.down();
      console.log('demo: stopped');
      return;
    }
    case 'status':
      wardenctl('list');
      if (standbyRunner().isRunning()) wardenctlOf(standbyRunner().layout, 'standby1', 'list');
      return;
    case 'standby':
      return standby();
    case 'stop':
    case 'start': {
      if (!arg) throw new Error(`usage: npm run demo -- ${command} <node>`);
      // node1..node3 belong to the demo, standby1 and standby2 to its standby cluster.
      const target = runner.layout.nodes.some((n) => n.name === arg) ? runner : standbyRunner();
      const name = target.node(arg).name;
      // As `systemctl stop` would: SIGTERM to the agent (in maintenance mode it leaves PostgreSQL running).
      if (command === 'stop') await target.terminateAgent(name);
      else target.startAgent(name);
      console.log(`demo: ${arg} ${command === 'stop' ? 'stopped' : 'started'}`);
      return;
    }
    default:
      throw new Error(`unknown command '${command}' (up, down, status, standby, stop <node>, start <node>)`);
  }
}

main().catch((e: Error) => {
  console.error(`demo: ${e.message}`);
  process.exit(1);
});
