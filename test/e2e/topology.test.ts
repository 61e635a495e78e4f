import { expect } from 'chai';
import type { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { sleep, waitFor } from '../../scripts/lib/processes.js';
import { api, disposeE2eCluster, e2eRunner, sql, suiteFailed, wardenctl } from './e2e-cluster.js';

/**
 * Topology on a real 3-node cluster (real etcd, agents, PostgreSQL 15): node3 is tagged
 * `replicatefrom: node2` and `failover_priority: 0`. It cascades from node2, falls back to
 * the leader while node2 is stopped and returns once it runs; and it never takes the leader
 * key, not even when it is the last member standing. The steps run in order.
 */
describe('e2e: topology (cascading replication, failover_priority 0)', function () {
  this.timeout(180_000);
  let runner: ClusterRunner;

  /** application_name of every streaming standby a node's walsenders serve. */
  async function standbysOf(node: string): Promise<string[]> {
    const r = await sql(runner, node, "SELECT application_name FROM pg_stat_replication WHERE state = 'streaming' ORDER BY 1");
    return r.rows.map((x: { application_name: string }) => x.application_name);
  }

  /** The port node3's WAL receiver streams from, while it streams. */
  async function node3SenderPort(): Promise<number | undefined> {
    const r = await sql(runner, 'node3', "SELECT sender_port, slot_name FROM pg_stat_wal_receiver WHERE status = 'streaming'");
    return r.rows[0]?.sender_port as number | undefined;
  }

  const port = (node: string) => runner.node(node).pgPort;
  const replicaCheck = async (node: string) => (await fetch(`${runner.apiUrl(node)}/replica`)).status;

  before(async function () {
    this.timeout(240_000);
    runner = await e2eRunner({ scope: 'e2e-topology', tags: { node3: { replicatefrom: 'node2', failover_priority: 0 } } });
    runner.prepare(true);
    await runner.startEtcd();
    // node1 leads: it starts first; node3 (failover_priority 0) would never bootstrap anyway.
    runner.startAgent('node1');
    await waitFor('node1 running as primary', 120_000, async () => ((await runner.nodeStatus('node1'))?.role === 'primary' ? true : undefined), 500);
    runner.startAgent('node2');
    runner.startAgent('node3');
    expect(await runner.waitHealthy(180_000)).to.equal('node1');
    await sql(runner, 'node1', 'CREATE TABLE IF NOT EXISTS topo (id int PRIMARY KEY)');
  });

  after(async function () {
    this.timeout(120_000);
    if (runner) await disposeE2eCluster(runner, suiteFailed(this));
  });

  it('a cascading replica streams from its named upstream, through a slot there, and serves reads', async () => {
    await waitFor('node3 streaming from node2', 60_000, async () => ((await node3SenderPort()) === port('node2') ? true : undefined), 250);
    expect(await standbysOf('node2')).to.deep.equal(['node3']);
    expect(await standbysOf('node1')).to.deep.equal(['node2']);
    const receiver = await sql(runner, 'node3', 'SELECT slot_name FROM pg_stat_wal_receiver');
    expect(receiver.rows[0].slot_name).to.equal('node3');
    const slot = await sql(runner, 'node2', "SELECT active FROM pg_replication_slots WHERE slot_name = 'node3'");
    expect(slot.rows[0].active).to.equal(true);
    // A write on the leader reaches node3 through node2.
    await sql(runner, 'node1', 'INSERT INTO topo VALUES (1)');
    await waitFor('the row on node3', 30_000, async () => ((await sql(runner, 'node3', 'SELECT count(*)::int AS n FROM topo WHERE id = 1')).rows[0].n === 1 ? true : undefined), 200);
    // Its WAL position is confirmed through the relay: it answers the read-only checks.
    await waitFor('node3 /replica 200', 30_000, async () => ((await replicaCheck('node3')) === 200 ? true : undefined), 250);
    expect((await runner.nodeStatus('node3'))?.['position_unconfirmed']).to.equal(undefined);
    // /cluster and wardenctl topology show who streams from whom.
    const doc = (await api(runner, 'node1', 'GET', '/cluster')).body as { members: { name: string; upstream?: string }[] };
    expect(doc.members.map((m) => [m.name, m.upstream ?? null])).to.deep.equal([['node1', null], ['node2', null], ['node3', 'node2']]);
    const rows = JSON.parse(wardenctl(runner, 'topology', '-f', 'json')) as { Member: string; Upstream: string | null; Depth: number }[];
    expect(rows.map((r) => [r.Member, r.Upstream, r.Depth])).to.deep.equal([['node1', null, 0], ['node2', 'node1', 1], ['node3', 'node2', 2]]);
  });

  it('falls back to the leader while its upstream is stopped, and returns once it runs again', async () => {
    const stoppedAt = Date.now();
    await runner.stopAgent('node2');
    await waitFor('node3 streaming from the leader node1', 60_000, async () => ((await node3SenderPort()) === port('node1') ? true : undefined), 250);
    const fellBackMs = Date.now() - stoppedAt;
    expect(await standbysOf('node1')).to.deep.equal(['node3']);
    await sql(runner, 'node1', 'INSERT INTO topo VALUES (2)');
    await waitFor('the row on node3 from the leader', 30_000, async () => ((await sql(runner, 'node3', 'SELECT count(*)::int AS n FROM topo WHERE id = 2')).rows[0].n === 1 ? true : undefined), 200);
    await waitFor('node3 /replica 200 while streaming from the leader', 30_000, async () => ((await replicaCheck('node3')) === 200 ? true : undefined), 250);
    const startedAt = Date.now();
    runner.startAgent('node2');
    await waitFor('node3 back on node2', 90_000, async () => ((await node3SenderPort()) === port('node2') ? true : undefined), 250);
    const backMs = Date.now() - startedAt;
    expect(await standbysOf('node1')).to.deep.equal(['node2']);
    expect(await standbysOf('node2')).to.deep.equal(['node3']);
    console.log(`      cascade: fell back to the leader ${fellBackMs} ms after its upstream's agent was stopped; back on it ${backMs} ms after its agent started (loop_wait ${runner.layout.dcs['loop_wait']})`);
  });

  it('a member with failover_priority 0 never becomes leader: not after the primary is killed, not as the last member standing', async () => {
    const ttl = runner.layout.dcs['ttl'] as number;
    const violations: string[] = [];
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const s = await runner.nodeStatus('node3');
        if (s && s.role !== 'replica') violations.push(`node3 ${s.role} ${s.state}`);
        const doc = await runner.clusterDocument();
        const leader = doc?.members.find((m) => m.role === 'leader')?.name;
        if (leader === 'node3') violations.push('node3 holds the leader key');
        await sleep(200);
      }
    })();
    try {
      const killedAt = Date.now();
      runner.killNode('node1');
      await waitFor('node2 writable', (ttl + 30) * 1000, async () => {
        try {
          return (await sql(runner, 'node2', 'SELECT pg_is_in_recovery() AS r')).rows[0].r === false ? true : undefined;
        } catch {
          return undefined;
        }
      }, 200);
      console.log(`      failover to node2 (node3 at failover_priority 0 stood aside): ${Date.now() - killedAt} ms after kill -9 of the primary`);
      // node3 cascades from node2, now the leader.
      await waitFor('node3 streaming from the new leader node2', 60_000, async () => ((await node3SenderPort()) === port('node2') ? true : undefined), 250);
      // The last member standing: node3 must keep out of the race.
      runner.killNode('node2');
      await sleep((ttl + 10) * 1000);
      const s = await runner.nodeStatus('node3');
      expect(s?.role).to.equal('replica');
      expect(s?.['cluster_unlocked']).to.equal(true);
      expect((s?.['not_eligible'] as { code: string; detail: string }[] | undefined)?.map((r) => r.detail).join()).to.match(/failover_priority 0/);
      expect((await sql(runner, 'node3', 'SELECT pg_is_in_recovery() AS r')).rows[0].r).to.equal(true);
    } finally {
      watching = false;
      await watcher;
    }
    expect(violations).to.deep.equal([]);
  });
});
