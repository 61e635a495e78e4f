import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { waitFor } from '../../scripts/lib/processes.js';
import { api, callbacksLog, disposeE2eCluster, e2eRunner, sql, suiteFailed } from './e2e-cluster.js';

/**
 * A cluster whose nodes run `post.sh <name> <url>` as post_bootstrap, the script made of
 * `lines(folder, runner)` (`folder` also holds the log the suites read), etcd started.
 */
async function postBootstrapCluster(scope: string, lines: (folder: string, runner: ClusterRunner) => readonly string[]): Promise<{ runner: ClusterRunner; folder: string }> {
  const runner = await e2eRunner({ scope, postBootstrap: '{hooks}/post.sh {name}' });
  runner.prepare(true);
  const folder = join(callbacksLog(runner), '..');
  const script = join(folder, 'post.sh');
  writeFileSync(script, ['#!/bin/sh', ...lines(folder, runner), ''].join('\n'));
  chmodSync(script, 0o755);
  return { runner, folder };
}

/** The lines the suite's post_bootstrap script logged. */
const loggedBy = (folder: string): string[] => (existsSync(join(folder, 'post.log')) ? readFileSync(join(folder, 'post.log'), 'utf8').trim().split('\n') : []);

/**
 * `bootstrap.post_bootstrap` on real agents: the script gets the superuser's URL, creates a
 * role and a table with psql, and the cluster is registered only once it succeeded. While it
 * fails (here: a `deny` file) no cluster comes up and no member copies the new primary; once
 * it succeeds, the replicas clone a primary that has what the script made.
 * Real etcd, agents and PostgreSQL 15.
 */
describe("e2e: Patroni's post_bootstrap", function () {
  this.timeout(300_000);
  let runner: ClusterRunner;
  let folder: string;
  const log = () => loggedBy(folder);

  before(async function () {
    this.timeout(60_000);
    // $1 is the node's name (from the command line), $2 the URL the agent adds.
    ({ runner, folder } = await postBootstrapCluster('post-bootstrap', (dir, r) => [
      `echo "$1 $2 password=$PGPASSWORD options=$PGOPTIONS" >> ${join(dir, 'post.log')}`,
      `[ -e ${dir}/deny ] && { echo "roles service unreachable" >&2; exit 1; }`,
      `exec ${r.layout.binDir}/psql "$2" -v ON_ERROR_STOP=1 -c "CREATE ROLE app LOGIN" -c "CREATE TABLE public.seeded (made_by text)" -c "INSERT INTO public.seeded VALUES ('$1')"`,
    ]));
    writeFileSync(join(folder, 'deny'), '');
    await runner.startEtcd();
  });

  after(async function () {
    if (runner) await disposeE2eCluster(runner, suiteFailed(this));
  });

  it('while the script fails no cluster comes up and nobody copies the new primary; fixed, the cluster comes up with what the script made', async () => {
    const replicasSeen: string[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        for (const n of runner.layout.nodes) {
          const s = await runner.nodeStatus(n.name);
          if (s?.role === 'replica' && s.state === 'running' && !replicasSeen.includes(n.name)) replicasSeen.push(n.name);
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    for (const n of runner.layout.nodes) runner.startAgent(n.name);
    await waitFor('three refused post_bootstrap runs', 120_000, async () => (log().length >= 3 ? true : undefined), 500);
    watching = false;
    await watcher;
    expect(replicasSeen, 'no copy of a bootstrap that was undone').to.deep.equal([]);
    const first = log()[0]!;
    expect(first).to.match(/^node\d postgresql:\/\/postgres@127\.0\.0\.1:\d+\/postgres password=warden-demo-su options=-c synchronous_commit=local -c statement_timeout=0$/);
    rmSync(join(folder, 'deny'));
    const leader = await runner.waitHealthy(180_000);
    expect((await api(runner, leader, 'GET', '/primary')).status).to.equal(200);
    // The script ran to the end once more, on the node that now leads.
    expect(log().at(-1)).to.match(new RegExp(`^${leader} `));
    for (const n of runner.layout.nodes) {
      const rows = await waitFor(`the seeded row on ${n.name}`, 30_000, async () => (await sql(runner, n.name, 'SELECT made_by FROM public.seeded').catch(() => null))?.rows);
      expect(rows, n.name).to.deep.equal([{ made_by: leader }]);
      const role = await sql(runner, n.name, "SELECT rolcanlogin FROM pg_roles WHERE rolname = 'app'");
      expect(role.rows, n.name).to.deep.equal([{ rolcanlogin: true }]);
    }
  });
});

describe('e2e: an agent killed while its post_bootstrap script runs', function () {
  this.timeout(300_000);
  let runner: ClusterRunner;
  let folder: string;
  const log = () => loggedBy(folder);

  before(async function () {
    this.timeout(60_000);
    // While `slow` exists the script only waits (and then fails): the host is killed meanwhile.
    ({ runner, folder } = await postBootstrapCluster('post-bootstrap-kill', (dir, r) => [
      `echo "$1" >> ${join(dir, 'post.log')}`,
      `[ -e ${dir}/slow ] && { echo $$ > ${dir}/post.pid; sleep 20; exit 1; }`,
      `exec ${r.layout.binDir}/psql "$2" -v ON_ERROR_STOP=1 -c "CREATE TABLE public.seeded (made_by text)" -c "INSERT INTO public.seeded VALUES ('$1')"`,
    ]));
    writeFileSync(join(folder, 'slow'), '');
    await runner.startEtcd();
  });

  after(async function () {
    if (runner) await disposeE2eCluster(runner, suiteFailed(this));
  });

  it('the data it left is never registered; started again, the agent removes it and bootstraps anew, and the others clone that', async () => {
    runner.startAgent('node1');
    await waitFor('the script running', 60_000, async () => (log().length >= 1 ? true : undefined), 200);
    const interrupted = (await sql(runner, 'node1', 'SELECT system_identifier::text AS id FROM pg_control_system()')).rows[0].id as string;
    // Running, and writable, but nothing is routed to it: the bootstrap may yet be undone.
    const during = await waitFor('/node to say the bootstrap is unfinished', 10_000, async () => {
      const s = (await api(runner, 'node1', 'GET', '/node')).body;
      return s?.state === 'running' && s?.bootstrap_unfinished === true ? s : undefined;
    });
    expect(during.role).to.equal('primary');
    expect((await api(runner, 'node1', 'GET', '/primary')).status).to.equal(503);
    expect((await api(runner, 'node1', 'GET', '/leader')).status).to.equal(503);
    runner.killNode('node1');
    // The script outlives its agent (a process group of its own): the host's crash takes it too.
    const scriptGroup = Number(await waitFor('the script\'s PID', 10_000, async () => (existsSync(join(folder, 'post.pid')) ? readFileSync(join(folder, 'post.pid'), 'utf8').trim() || undefined : undefined)));
    try {
      process.kill(-scriptGroup, 'SIGKILL');
    } catch {
      // Already gone.
    }
    rmSync(join(folder, 'slow'));
    runner.startAgent('node1');
    await runner.waitHealthy(120_000, ['node1']);
    const fresh = (await sql(runner, 'node1', 'SELECT system_identifier::text AS id FROM pg_control_system()')).rows[0].id as string;
    expect(fresh, 'a new cluster, not the interrupted one').to.not.equal(interrupted);
    expect(readFileSync(join(runner.layout.dir, 'logs', 'node1.log'), 'utf8')).to.contain('bootstrap was interrupted before its post_bootstrap script succeeded and the cluster was registered: removing it');
    runner.startAgent('node2');
    runner.startAgent('node3');
    await runner.waitHealthy(180_000);
    for (const n of runner.layout.nodes) {
      const rows = await waitFor(`the seeded row on ${n.name}`, 30_000, async () => (await sql(runner, n.name, 'SELECT made_by FROM public.seeded').catch(() => null))?.rows);
      expect(rows, n.name).to.deep.equal([{ made_by: 'node1' }]);
      const id = (await sql(runner, n.name, 'SELECT system_identifier::text AS id FROM pg_control_system()')).rows[0].id as string;
      expect(id, n.name).to.equal(fresh);
    }
  });
});

describe('e2e: a bootstrapper frozen (SIGSTOP) after its post_bootstrap script, before it registered the cluster', function () {
  this.timeout(300_000);
  let runner: ClusterRunner;
  let folder: string;
  let frozen: number | undefined;
  const log = () => loggedBy(folder);
  const systemId = async (node: string) => (await sql(runner, node, 'SELECT system_identifier::text AS id FROM pg_control_system()')).rows[0].id as string;

  before(async function () {
    this.timeout(60_000);
    // node1's script takes a few seconds (its agent is frozen meanwhile), then succeeds like the others'.
    ({ runner, folder } = await postBootstrapCluster('post-bootstrap-frozen', (dir, r) => [
      `echo "$1" >> ${join(dir, 'post.log')}`,
      '[ "$1" = node1 ] && sleep 4',
      `exec ${r.layout.binDir}/psql "$2" -v ON_ERROR_STOP=1 -c "CREATE TABLE public.seeded (made_by text)" -c "INSERT INTO public.seeded VALUES ('$1')"`,
    ]));
    await runner.startEtcd();
  });

  after(async function () {
    if (frozen !== undefined) {
      try {
        process.kill(frozen, 'SIGCONT');
      } catch {
        // Gone.
      }
    }
    if (runner) await disposeE2eCluster(runner, suiteFailed(this));
  });

  it('its lock runs out and its fencer stops the server; another member bootstraps; thawed, it registers nothing and clones the new cluster', async () => {
    runner.startAgent('node1');
    await waitFor('node1 running its script', 60_000, async () => (log().includes('node1') ? true : undefined), 100);
    const first = await systemId('node1');
    frozen = runner.agentPid('node1');
    expect(frozen).to.be.a('number');
    process.kill(frozen!, 'SIGSTOP');
    runner.startAgent('node2');
    runner.startAgent('node3');
    // The others wait for node1's claim until it is abandoned, then one of them bootstraps a cluster of its own.
    const leader = await runner.waitHealthy(180_000, ['node2', 'node3']);
    const second = await systemId(leader);
    expect(second).to.not.equal(first);
    process.kill(frozen!, 'SIGCONT');
    frozen = undefined;
    await runner.waitHealthy(180_000);
    // node1's data is gone: it runs a copy of the registered cluster, with what the leader's script made.
    expect(await systemId('node1')).to.equal(second);
    const rows = await waitFor('the seeded row on node1', 30_000, async () => (await sql(runner, 'node1', 'SELECT made_by FROM public.seeded').catch(() => null))?.rows);
    expect(rows).to.deep.equal([{ made_by: leader }]);
    const agentLog = readFileSync(join(runner.layout.dir, 'logs', 'node1.log'), 'utf8');
    expect(agentLog).to.match(/the leader lock ran out before this could run|holds no claim to complete/);
  });
});
