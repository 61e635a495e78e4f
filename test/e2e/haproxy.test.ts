import { expect } from 'chai';
import pg from 'pg';
import type { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { sleep, waitFor } from '../../scripts/lib/processes.js';
import { HaproxyProcess, ProxyClient, StatsSampler } from '../support/haproxy.js';
import { api, bringUp, candidateCaughtUp, disposeE2eCluster, e2eRunner, sql, suiteFailed } from './e2e-cluster.js';

/** Which server a new connection through the proxy reaches: its port and whether it is in recovery; undefined when the proxy refuses. */
async function reached(port: number): Promise<{ port: number; recovery: boolean } | undefined> {
  const c = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password: 'warden-demo-su', database: 'postgres', connectionTimeoutMillis: 2000, query_timeout: 2000 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    const r = await c.query('SELECT inet_server_port() AS port, pg_is_in_recovery() AS recovery');
    return { port: Number(r.rows[0].port), recovery: r.rows[0].recovery as boolean };
  } catch {
    return undefined;
  } finally {
    await c.end().catch(() => undefined);
  }
}

/**
 * HAProxy (Debian `haproxy`) with the load-balancing page's example, as users copy it, in front
 * of a real 3-node cluster: writes reach the primary, reads a replica, and a switchover moves
 * the write port without ever showing two servers UP in the primary section.
 */
describe('e2e: HAProxy in front of a cluster, configured as the handbook shows', function () {
  this.timeout(180_000);
  let runner: ClusterRunner;
  let proxy: HaproxyProcess | undefined;
  let primary: string;

  const pgPortOf = (node: string) => runner.node(node).pgPort;

  before(async function () {
    this.timeout(240_000);
    runner = await e2eRunner({ scope: 'haproxy' });
    primary = await bringUp(runner);
    await sql(runner, primary, 'CREATE TABLE IF NOT EXISTS proxy_writes (id bigint PRIMARY KEY)');
    proxy = await HaproxyProcess.start(runner);
  });

  after(async function () {
    this.timeout(120_000);
    await proxy?.stop();
    if (runner) await disposeE2eCluster(runner, suiteFailed(this));
  });

  it('sends writes to the primary and reads to a streaming replica', async () => {
    const w = await waitFor('the write port to reach a server', 30_000, () => reached(proxy!.primaryPort), 200);
    expect(w).to.deep.equal({ port: pgPortOf(primary), recovery: false });
    const replicas = runner.layout.nodes.filter((n) => n.name !== primary).map((n) => n.pgPort);
    await waitFor('both replicas UP in the replicas section', 30_000, async () => ((await proxy!.servers()).filter((s) => s.proxy === 'replicas' && s.status.startsWith('UP')).length === 2 ? true : undefined), 200);
    for (let i = 0; i < 6; i++) {
      const r = await reached(proxy!.replicaPort);
      expect(r?.recovery, 'a read connection reaches a replica').to.equal(true);
      expect(replicas).to.include(r!.port);
    }
  });

  it('moves the write port to the new primary in a switchover, never with two servers UP', async () => {
    const candidate = runner.layout.nodes.map((n) => n.name).find((n) => n !== primary)!;
    const sampler = new StatsSampler(proxy!);
    sampler.start();
    const client = new ProxyClient(proxy!.primaryPort, 'INSERT INTO proxy_writes(id) VALUES ($1)');
    client.start();
    await waitFor('a write through the proxy', 10_000, async () => (client.acknowledged.length > 0 ? true : undefined), 50);
    await candidateCaughtUp(runner, primary, candidate);
    const from = Date.now();
    const r = await api(runner, primary, 'POST', '/switchover', { leader: primary, candidate });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const moved = await waitFor('the write port to reach the new primary', 30_000, async () => {
      const at = await reached(proxy!.primaryPort);
      return at?.port === pgPortOf(candidate) && !at.recovery ? at : undefined;
    }, 100);
    expect(moved.port).to.equal(pgPortOf(candidate));
    await sleep(500);
    await Promise.all([client.stop(), sampler.stop()]);
    const longestGap = client.longestGap(from, Date.now());
    const acknowledged = client.acknowledged;
    console.log(`      through HAProxy: longest time without a write ${longestGap.toFixed(0)} ms, ${acknowledged.length} writes acknowledged, ${sampler.samples.length} samples of the primary section`);
    expect(sampler.samples.filter((x) => x.up.length > 1), 'samples with two servers UP in the primary section').to.deep.equal([]);
    const stored = await sql(runner, candidate, 'SELECT count(*)::int AS n FROM proxy_writes WHERE id = ANY($1)', [acknowledged]);
    expect(stored.rows[0].n, 'every acknowledged write is on the new primary').to.equal(acknowledged.length);
    // Not a timing test (the machine is shared): only that the client got going again within seconds.
    expect(longestGap).to.be.below(10_000);
    primary = candidate;
  });
});
