import { expect } from 'chai';
import type { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { waitFor } from '../../scripts/lib/processes.js';
import { parseLsn } from '../../src/domain/cluster/model/lsn.js';
import { api, bringUp, disposeE2eCluster, e2eRunner, sql, suiteFailed } from './e2e-cluster.js';

/**
 * Quorum mode on a real 3-node cluster (real etcd, agents, PostgreSQL 15): node3 is tagged
 * `failover_priority: 0` and confirms commits like any quorum member. When the primary
 * acknowledged commits with node3's confirmation alone and then dies, the member that may
 * lead is behind node3: it streams the missing WAL from node3 first, then promotes, and no
 * acknowledged commit is lost.
 */
describe('e2e: quorum mode, the member ahead may not lead', function () {
  this.timeout(240_000);
  let runner: ClusterRunner;

  before(async function () {
    this.timeout(240_000);
    runner = await e2eRunner({ scope: 'quorum', tags: { node3: { failover_priority: 0 } } });
    await bringUp(runner);
  });

  after(async function () {
    this.timeout(120_000);
    if (runner) await disposeE2eCluster(runner, suiteFailed(this));
  });

  it('catches up from the member ahead, then promotes with every acknowledged commit', async () => {
    const primary = await runner.waitHealthy(60_000);
    expect(primary).to.not.equal('node3');
    const other = primary === 'node1' ? 'node2' : 'node1';
    await sql(runner, primary, 'CREATE TABLE quorum_writes (id int PRIMARY KEY, pad text)');
    // Stored as written (no compression): 1 MB of WAL a row for little CPU, so the writes below
    // take well under the 5 s after which the primary leaves a stalled standby out of the list.
    await sql(runner, primary, 'ALTER TABLE quorum_writes ALTER COLUMN pad SET STORAGE EXTERNAL');
    expect((await api(runner, primary, 'PATCH', '/config', { synchronous_mode: 'quorum', synchronous_node_count: 1 })).status).to.equal(200);
    // The sync key is written before the setting names its members: both listed means both in the key.
    await waitFor('ANY 1 of both replicas', 60_000, async () => {
      const v = String((await sql(runner, primary, 'SHOW synchronous_standby_names')).rows[0].synchronous_standby_names);
      return v.startsWith('ANY 1') && v.includes(other) && v.includes('node3') ? v : undefined;
    });

    // The other member's WAL receiver stops: from here on node3 alone confirms each commit.
    const receiver = Number((await sql(runner, other, 'SELECT pid FROM pg_stat_wal_receiver')).rows[0].pid);
    process.kill(receiver, 'SIGSTOP');
    const acknowledged: number[] = [];
    let behindBytes = 0;
    try {
      // ~1 MB of WAL a row: more than the stopped receiver's socket buffers hold.
      const writesFrom = Date.now();
      for (let id = 1; id <= 24; id++) {
        await sql(runner, primary, `INSERT INTO quorum_writes VALUES ($1, repeat('x', 1048576))`, [id]);
        acknowledged.push(id);
      }
      // Both must still be in the list: a standby left out while it stalled holds nothing the
      // quorum vouches for and may not lead, which is another test's story.
      const list = String((await sql(runner, primary, 'SHOW synchronous_standby_names')).rows[0].synchronous_standby_names);
      expect(list, `the writes took ${Date.now() - writesFrom} ms`).to.include(other);
      const at = async (node: string) => parseLsn(String((await sql(runner, node, 'SELECT pg_last_wal_receive_lsn() AS l')).rows[0].l)) ?? 0;
      behindBytes = (await at('node3')) - (await at(other));
      runner.killNode(primary);
    } finally {
      process.kill(receiver, 'SIGCONT');
    }
    console.log(`      ${acknowledged.length} commits acknowledged with node3 alone; ${other} was ${(behindBytes / 1048576).toFixed(1)} MiB behind node3`);
    expect(behindBytes).to.be.greaterThan(8 * 1048576);

    const killedAt = Date.now();
    const ttl = runner.layout.dcs['ttl'] as number;
    // The old primary stays down: a cluster that waited for it would fail here (and say what each node waited for).
    const leader = await runner.waitHealthy((ttl + 60) * 1000, [other, 'node3']);
    console.log(`      ${leader} leads, node3 streams from it, ${Date.now() - killedAt} ms after the primary was killed`);
    expect(leader).to.equal(other);
    const stored = await sql(runner, other, 'SELECT count(*)::int AS n FROM quorum_writes WHERE id = ANY($1)', [acknowledged]);
    expect(stored.rows[0].n).to.equal(acknowledged.length);
  });
});
