import { expect } from 'chai';
import type { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { sleep } from '../../scripts/lib/processes.js';
import { fillEtcdToQuota, freeEtcdSpace } from '../support/etcd-server.js';
import { api, disposeE2eCluster, e2eRunner, sql, suiteFailed, Writer } from './e2e-cluster.js';

const QUOTA_BYTES = 24 * 1024 * 1024;

/**
 * etcd reaches its storage quota (the NOSPACE alarm) under a running cluster: the primary keeps
 * its lock and its writes (a held lock is renewed by keep-alive, which etcd still answers), the
 * operator's commands are refused saying what to do, and once space is freed and the alarm
 * disarmed everything works again. Real etcd (with a small quota), agents and PostgreSQL 15.
 */
describe('e2e: etcd out of space', function () {
  this.timeout(300_000);
  let runner: ClusterRunner;
  let primary: string;

  const endpoint = () => `127.0.0.1:${runner.layout.etcdClientPort}`;

  before(async function () {
    this.timeout(240_000);
    runner = await e2eRunner({ scope: 'etcdfull' });
    runner.prepare(true);
    process.env['ETCD_QUOTA_BACKEND_BYTES'] = String(QUOTA_BYTES);
    try {
      await runner.startEtcd();
    } finally {
      delete process.env['ETCD_QUOTA_BACKEND_BYTES'];
    }
    for (const n of runner.layout.nodes) runner.startAgent(n.name);
    primary = await runner.waitHealthy(180_000);
  });

  after(async function () {
    this.timeout(120_000);
    if (!runner) return;
    await runner.down();
    await disposeE2eCluster(runner, suiteFailed(this));
  });

  it('the primary keeps its lock and its writes through the alarm; commands are refused with what to do; all works again once disarmed', async () => {
    await sql(runner, primary, 'CREATE TABLE e2e_writes (id bigint PRIMARY KEY, at timestamptz DEFAULT now())');
    const writer = new Writer(runner, 20);
    writer.start();
    const full = await fillEtcdToQuota(endpoint(), '/filler/');
    expect(full, 'etcd reached its quota').to.equal(true);
    // Longer than ttl (20 s): a lock that needed a write to be renewed would be gone by then.
    await sleep(25_000);
    const node = (await api(runner, primary, 'GET', '/node')).body as { role: string; state: string };
    expect(node, 'still the running primary').to.deep.include({ role: 'primary', state: 'running' });
    const refused = await api(runner, primary, 'POST', '/switchover', { leader: primary });
    expect(refused.status).to.equal(503);
    expect(refused.body.message).to.match(/database space exceeded.*etcdctl alarm disarm/);

    await freeEtcdSpace(endpoint(), '/filler/');
    await sleep(3000);
    await writer.stop();
    console.log(`      through the alarm: longest write gap ${writer.maxGapMs} ms (writes stopped at most ${writer.maxStoppedMs} ms), ${writer.acknowledged.length} writes acknowledged`);
    // A commit that takes long on a busy machine is not a stop: no write refused for this long.
    expect(writer.maxStoppedMs, 'no write refused while etcd took no writes (ms)').to.be.below(2000);
    const done = await api(runner, primary, 'POST', '/switchover', { leader: primary });
    expect(done.status, JSON.stringify(done.body)).to.equal(200);
    await runner.waitHealthy(120_000);
  });
});
