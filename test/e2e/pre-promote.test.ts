import { existsSync, readFileSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'chai';
import type { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { waitFor } from '../../scripts/lib/processes.js';
import { api, callbacksLog, candidateCaughtUp, disposeE2eCluster, e2eRunner, sql, startClusterLedBy, suiteFailed } from './e2e-cluster.js';

/**
 * The operator's blocking scripts on real agents: `pre_promote` (a fencing script: the
 * promotion goes ahead only when it succeeds) and `before_stop` (the agent's stops wait for
 * it). A script that refuses (here: a `deny-<node>` file, as a fencing device that does not
 * answer) makes its node give the key back; another member promotes, never two at a time.
 * A member tagged `clonefrom` serves the base backup of a reinitialized replica.
 * Real etcd, agents and PostgreSQL 15.
 */
describe("e2e: Patroni's pre_promote, before_stop and clonefrom", function () {
  this.timeout(300_000);
  let runner: ClusterRunner;
  let folder: string;
  const log = () => (existsSync(join(folder, 'hooks.log')) ? readFileSync(join(folder, 'hooks.log'), 'utf8').trim().split('\n') : []);

  /** Names of the members whose server takes writes now. */
  async function writable(): Promise<string[]> {
    const out: string[] = [];
    for (const n of runner.layout.nodes) {
      const r = await sql(runner, n.name, 'SELECT pg_is_in_recovery() AS r').catch(() => null);
      if (r?.rows[0]?.r === false) out.push(n.name);
    }
    return out;
  }

  before(async function () {
    this.timeout(240_000);
    runner = await e2eRunner({
      scope: 'hooks',
      tags: { node1: { clonefrom: true } },
      hooks: { pre_promote: '{hooks}/hook.sh {name} pre_promote', before_stop: '{hooks}/hook.sh {name} before_stop' },
    });
    runner.prepare(true);
    folder = join(callbacksLog(runner), '..');
    const script = join(folder, 'hook.sh');
    writeFileSync(
      script,
      `#!/bin/sh\necho "$1 $2" >> ${join(folder, 'hooks.log')}\n[ "$2" = pre_promote ] && [ -e ${folder}/deny-$1 ] && { echo "fencing device does not answer" >&2; exit 1; }\nexit 0\n`,
    );
    chmodSync(script, 0o755);
    await startClusterLedBy(runner, 'node1');
  });

  after(async function () {
    if (runner) await disposeE2eCluster(runner, suiteFailed(this));
  });

  it('a switchover whose candidate cannot fence: the candidate gives the key back, another member promotes, never two writable', async () => {
    writeFileSync(join(folder, 'deny-node2'), '');
    const before = log().length;
    let most = 0;
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        most = Math.max(most, (await writable()).length);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await candidateCaughtUp(runner, 'node1', 'node2');
    const r = await api(runner, 'node1', 'POST', '/switchover', { leader: 'node1', candidate: 'node2' });
    expect(r.status, JSON.stringify(r.body)).to.be.below(500).and.not.equal(412);
    const leader = await waitFor('a primary other than node2', 60_000, async () => {
      const w = await writable();
      return w.length === 1 && w[0] !== 'node2' ? w[0] : undefined;
    });
    watching = false;
    await watcher;
    expect(most).to.be.at.most(1);
    const lines = log().slice(before);
    // node1 stopped for the switchover (its before_stop ran), node2 refused, the winner's script ran.
    expect(lines).to.include('node1 before_stop');
    // node2 tried again while the others left the race to it (the requested candidate), with growing pauses.
    expect(lines.filter((l) => l === 'node2 pre_promote').length).to.be.within(1, 4);
    expect(lines).to.include(`${leader} pre_promote`);
    expect((await runner.nodeStatus('node2'))?.role).to.not.equal('primary');
    expect(readFileSync(join(runner.layout.dir, 'logs', 'node2.log'), 'utf8')).to.match(/pre_promote script failed: exited with code 1: fencing device does not answer/);
  });

  it('once the fencing works again, a switchover to that member promotes it', async () => {
    rmSync(join(folder, 'deny-node2'));
    const runs = () => log().filter((l) => l === 'node2 pre_promote').length;
    const before = runs();
    const leader = (await writable())[0]!;
    await waitFor('node2 running', 60_000, async () => ((await runner.nodeStatus('node2'))?.state === 'running' ? true : undefined));
    const r = await api(runner, leader, 'POST', '/switchover', { leader, candidate: 'node2' });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    await waitFor('node2 the only primary', 60_000, async () => ((await writable()).join() === 'node2' ? true : undefined));
    expect(runs()).to.equal(before + 1);
  });

  it('a reinitialized replica copies the member tagged clonefrom, not the primary, and streams from the primary', async () => {
    // node2 leads; node1 (tagged clonefrom) and node3 are its replicas.
    await waitFor('node1 streaming', 60_000, async () => ((await runner.nodeStatus('node1'))?.replication_state === 'streaming' ? true : undefined));
    const logFile = join(runner.layout.dir, 'logs', 'node3.log');
    const copies = () => readFileSync(logFile, 'utf8').split('\n').filter((l) => l.includes('"msg":"replica created"'));
    const before = copies().length;
    const r = await api(runner, 'node3', 'POST', '/reinitialize', { force: true });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    await waitFor('node3 copied', 120_000, async () => (copies().length > before ? true : undefined));
    expect(JSON.parse(copies()[before]!)).to.deep.include({ source: 'node1' });
    await waitFor('node3 streaming from node2', 120_000, async () => ((await runner.nodeStatus('node3'))?.replication_state === 'streaming' ? true : undefined));
    const up = await sql(runner, 'node3', "SELECT sender_host, sender_port FROM pg_stat_wal_receiver");
    expect(Number(up.rows[0]?.sender_port)).to.equal(runner.node('node2').pgPort);
  });
});
