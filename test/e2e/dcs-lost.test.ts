import { spawnSync } from 'node:child_process';
import { expect } from 'chai';
import type { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { sleep, waitFor } from '../../scripts/lib/processes.js';
import { bringUp, disposeE2eCluster, e2eRunner, sql, suiteFailed } from './e2e-cluster.js';

/**
 * etcd lost every key while every server was down, and the former primary does not come back:
 * the replica that stopped first (behind) is started first, the other one (killed, so its
 * server replays WAL for a while when it starts) a moment later. Both former replicas start their
 * servers read-only while they wait for a primary's data; once one registers the cluster, the
 * race sees both positions and the one holding every commit leads. Real etcd, agents and
 * PostgreSQL 15.
 */
describe('e2e: etcd lost its keys while the cluster was down', function () {
  this.timeout(300_000);
  let runner: ClusterRunner;

  before(async function () {
    this.timeout(240_000);
    runner = await e2eRunner({ scope: 'dcslost', dcs: { primary_start_timeout: 15 } });
    await bringUp(runner);
  });

  after(async function () {
    this.timeout(120_000);
    if (runner) await disposeE2eCluster(runner, suiteFailed(this));
  });

  it('the more advanced former replica leads, not the first to register: no acknowledged commit lost', async () => {
    const primary = await runner.waitHealthy(60_000);
    const [ahead, behind] = runner.layout.nodes.map((n) => n.name).filter((n) => n !== primary) as [string, string];
    await sql(runner, primary, 'CREATE TABLE lost_keys (id int PRIMARY KEY)');
    await sql(runner, primary, 'INSERT INTO lost_keys SELECT generate_series(1, 10)');
    await waitFor(`${behind} replaying the first rows`, 30_000, async () => ((await sql(runner, behind, 'SELECT count(*)::int AS n FROM lost_keys').catch(() => null))?.rows[0]?.n === 10 ? true : undefined));
    // The behind replica's host goes down first; the cluster commits on without it.
    await runner.stopAgent(behind);
    // ~150 MB of WAL since the last restartpoint: the more advanced replica, killed, needs a while to replay it when it starts again.
    await sql(runner, primary, "CREATE TABLE bulk AS SELECT g AS id, repeat('x', 1000) AS pad FROM generate_series(1, 120000) g");
    await sql(runner, primary, 'INSERT INTO lost_keys SELECT generate_series(11, 20)');
    await waitFor(`${ahead} replaying every row`, 60_000, async () => ((await sql(runner, ahead, 'SELECT count(*)::int AS n FROM lost_keys').catch(() => null))?.rows[0]?.n === 20 ? true : undefined));
    runner.killNode(ahead);
    await runner.stopAgent(primary);
    const wiped = spawnSync('etcdctl', [`--endpoints=127.0.0.1:${runner.layout.etcdClientPort}`, 'del', '--prefix', `${runner.layout.namespace}/${runner.layout.scope}/`], { encoding: 'utf8' });
    expect(wiped.status, wiped.stderr).to.equal(0);
    expect(Number(wiped.stdout.trim())).to.be.above(0);

    // The former primary's host is gone; the replica that lacks the last rows comes back first.
    runner.startAgent(behind);
    await sleep(3000);
    runner.startAgent(ahead);
    const leader = await runner.waitHealthy(120_000, [behind, ahead]);
    expect(leader, 'the member holding every commit leads').to.equal(ahead);
    expect((await sql(runner, leader, 'SELECT count(*)::int AS n FROM lost_keys')).rows[0].n).to.equal(20);
    await waitFor(`${behind} streaming the last rows`, 60_000, async () => ((await sql(runner, behind, 'SELECT count(*)::int AS n FROM lost_keys').catch(() => null))?.rows[0]?.n === 20 ? true : undefined));
  });
});
