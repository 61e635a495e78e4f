import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeConfigPath, type ClusterLayout } from '../../scripts/lib/cluster-layout.js';
import { ClusterRunner } from '../../scripts/lib/cluster-runner.js';
import { waitFor } from '../../scripts/lib/processes.js';
import { freePorts } from '../support/free-port.js';
import { E2E_DCS, sql } from './e2e-cluster.js';

/** A 2-node layout on `ports` (API, PostgreSQL per node), sharing the etcd of `etcdClientPort`. */
function layout(scope: string, names: readonly string[], ports: readonly number[], etcd: readonly [number, number], dcs: Record<string, unknown>): ClusterLayout {
  const dir = mkdtempSync(join(tmpdir(), `warden-${scope}-`));
  chmodSync(dir, 0o755);
  return {
    dir,
    scope,
    namespace: '/service',
    etcdClientPort: etcd[0],
    etcdPeerPort: etcd[1],
    nodes: names.map((name, i) => ({ name, apiPort: ports[2 * i]!, pgPort: ports[2 * i + 1]! })),
    dcs: { ...E2E_DCS, ...dcs },
    binDir: '/usr/lib/postgresql/15/bin',
  };
}

/** wardenctl with one node's configuration file; returns stdout, throws with stderr on failure. */
function wardenctl(runner: ClusterRunner, node: string, ...args: string[]): string {
  const r = spawnSync(process.execPath, ['bin/wardenctl.js', '-c', nodeConfigPath(runner.layout, node), ...args], { encoding: 'utf8', timeout: 180_000 });
  if (r.status !== 0) throw new Error(`wardenctl ${args.join(' ')} exited ${r.status}: ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** HTTP status of a GET on one agent. */
async function statusOf(runner: ClusterRunner, node: string, path: string): Promise<number> {
  return (await fetch(`${runner.apiUrl(node)}${path}`, { signal: AbortSignal.timeout(5000) })).status;
}

/** The rows of e2e_standby a node holds (null while it does not answer). */
async function rows(runner: ClusterRunner, node: string): Promise<number[] | null> {
  try {
    return (await sql(runner, node, 'SELECT x FROM e2e_standby ORDER BY x')).rows.map((r: { x: number }) => r.x);
  } catch {
    return null;
  }
}

/** Waits until every node of `names` holds row `x`. */
async function rowEverywhere(runner: ClusterRunner, names: readonly string[], x: number, timeoutMs = 60_000): Promise<void> {
  await waitFor(`row ${x} on ${names.join(', ')}`, timeoutMs, async () => {
    for (const n of names) if (!(await rows(runner, n))?.includes(x)) return undefined;
    return true;
  }, 250);
}

/** The port the node's WAL receiver streams from (null when it does not stream). */
async function senderPort(runner: ClusterRunner, node: string): Promise<number | null> {
  try {
    const r = await sql(runner, node, "SELECT sender_port FROM pg_stat_wal_receiver WHERE status = 'streaming'");
    return r.rows[0]?.sender_port ?? null;
  } catch {
    return null;
  }
}

/**
 * Two clusters (scopes) on one real etcd: `e2e-src` (p1, p2) and its standby cluster
 * `e2e-standby` (s1, s2) streaming from the source's primary through a permanent slot. The
 * steps run in order on the same clusters: replication into the standby cluster, the standby
 * leader killed, promote-cluster, then demote-cluster of the former source.
 */
describe('e2e: a standby cluster', function () {
  this.timeout(240_000);
  let src: ClusterRunner;
  let sb: ClusterRunner;
  let srcPrimary: string;
  let standbyLeader: string;

  before(async function () {
    this.timeout(300_000);
    const ports = await freePorts(10);
    const etcd = [ports[0]!, ports[1]!] as const;
    src = new ClusterRunner(layout('e2e-src', ['p1', 'p2'], ports.slice(2, 6), etcd, { slots: { e2e_standby: { type: 'physical' } } }));
    src.prepare(true);
    await src.startEtcd();
    for (const n of src.layout.nodes) src.startAgent(n.name);
    srcPrimary = await src.waitHealthy(180_000);
    await sql(src, srcPrimary, 'CREATE TABLE e2e_standby (x int PRIMARY KEY); INSERT INTO e2e_standby VALUES (1)');
    const remote = { host: '127.0.0.1', port: src.node(srcPrimary).pgPort, primary_slot_name: 'e2e_standby' };
    sb = new ClusterRunner(layout('e2e-standby', ['s1', 's2'], ports.slice(6, 10), etcd, { standby_cluster: remote }));
    sb.prepare(true);
    for (const n of sb.layout.nodes) sb.startAgent(n.name);
    standbyLeader = await sb.waitHealthy(180_000, undefined, 'standby_leader');
  });

  after(async function () {
    this.timeout(120_000);
    if (sb) await sb.down();
    if (src) await src.down();
    for (const r of [sb, src]) if (r) rmSync(r.layout.dir, { recursive: true, force: true });
  });

  it('the standby leader streams from the source primary through its slot and answers as the standby leader; the other member cascades from it', async () => {
    const replica = sb.layout.nodes.map((n) => n.name).find((n) => n !== standbyLeader)!;
    expect(await statusOf(sb, standbyLeader, '/standby-leader')).to.equal(200);
    expect(await statusOf(sb, standbyLeader, '/leader')).to.equal(200);
    expect(await statusOf(sb, standbyLeader, '/primary')).to.equal(503);
    expect(await statusOf(sb, standbyLeader, '/read-write')).to.equal(503);
    expect(await statusOf(sb, replica, '/replica')).to.equal(200);
    expect(await statusOf(sb, replica, '/standby-leader')).to.equal(503);
    const metrics = await (await fetch(`${sb.apiUrl(standbyLeader)}/metrics`)).text();
    expect(metrics).to.match(/^svc_standby_leader\{[^}]*\} 1$/m);
    const doc = (await sb.clusterDocument())!;
    expect(doc.members.find((m) => m.name === standbyLeader)?.role).to.equal('standby_leader');
    await waitFor('the standby leader streaming from the source', 30_000, async () => ((await senderPort(sb, standbyLeader)) === src.node(srcPrimary).pgPort ? true : undefined));
    await waitFor('the replica streaming from the standby leader', 30_000, async () => ((await senderPort(sb, replica)) === sb.node(standbyLeader).pgPort ? true : undefined));
    await waitFor('the source\'s slot in use', 30_000, async () => {
      const slot = await sql(src, srcPrimary, "SELECT active FROM pg_replication_slots WHERE slot_name = 'e2e_standby'");
      return slot.rows[0]?.active === true ? true : undefined;
    });
    // Not writable.
    let refused = false;
    try {
      await sql(sb, standbyLeader, 'INSERT INTO e2e_standby VALUES (99)');
    } catch (e) {
      refused = /read-only/.test((e as Error).message);
    }
    expect(refused).to.equal(true);
  });

  it('a row written on the source primary appears on both members of the standby cluster', async () => {
    await sql(src, srcPrimary, 'INSERT INTO e2e_standby VALUES (2)');
    await rowEverywhere(sb, ['s1', 's2'], 2);
  });

  it('kill -9 of the standby leader (agent, fencer, postmaster): the other member becomes the standby leader and streams from the source', async () => {
    const survivor = sb.layout.nodes.map((n) => n.name).find((n) => n !== standbyLeader)!;
    const t0 = Date.now();
    sb.killNode(standbyLeader);
    await waitFor(`${survivor} the standby leader, streaming from the source`, 90_000, async () => {
      const s = await sb.nodeStatus(survivor);
      return s?.role === 'standby_leader' && (await senderPort(sb, survivor)) === src.node(srcPrimary).pgPort ? true : undefined;
    }, 250);
    console.log(`      standby leader ${standbyLeader} killed: ${survivor} standby leader after ${Date.now() - t0} ms (ttl ${E2E_DCS.ttl})`);
    await sql(src, srcPrimary, 'INSERT INTO e2e_standby VALUES (3)');
    await rowEverywhere(sb, [survivor], 3);
    expect(await statusOf(sb, survivor, '/standby-leader')).to.equal(200);
    // The killed member comes back as a replica cascading from the new standby leader.
    const killed = standbyLeader;
    standbyLeader = survivor;
    sb.startAgent(killed);
    await sb.waitHealthy(120_000, undefined, 'standby_leader');
    await waitFor(`${killed} streaming from ${survivor}`, 60_000, async () => ((await senderPort(sb, killed)) === sb.node(survivor).pgPort ? true : undefined), 250);
    await rowEverywhere(sb, [killed], 3);
  });

  it('promote-cluster: the standby leader becomes a writable primary on a new timeline, its replica follows', async () => {
    const t0 = Date.now();
    const out = wardenctl(sb, 's1', 'promote-cluster', '--force');
    expect(out).to.match(new RegExp(`Cluster e2e-standby is a primary cluster: ${standbyLeader} is the primary \\(timeline 2\\)`));
    console.log(`      promote-cluster: ${standbyLeader} writable after ${Date.now() - t0} ms`);
    await sql(sb, standbyLeader, 'INSERT INTO e2e_standby VALUES (4)');
    const primary = await sb.waitHealthy(60_000);
    expect(primary).to.equal(standbyLeader);
    await rowEverywhere(sb, ['s1', 's2'], 4);
    expect(await statusOf(sb, standbyLeader, '/primary')).to.equal(200);
  });

  it('demote-cluster: the former source becomes a standby cluster of the promoted one (rewound past its branch point), both members following', async () => {
    // The source went on writing after the standby cluster was promoted: its WAL has gone past the branch point.
    await sql(src, srcPrimary, 'INSERT INTO e2e_standby VALUES (5)');
    const t0 = Date.now();
    const out = wardenctl(src, 'p1', 'demote-cluster', '--host', '127.0.0.1', '--port', String(sb.node(standbyLeader).pgPort), '--force');
    expect(out).to.match(new RegExp(`Cluster e2e-src is a standby cluster: ${srcPrimary} is the standby leader`));
    const leader = await src.waitHealthy(120_000, undefined, 'standby_leader');
    console.log(`      demote-cluster: ${leader} standby leader and its replica streaming after ${Date.now() - t0} ms`);
    expect(leader).to.equal(srcPrimary);
    await waitFor(`${srcPrimary} streaming from the promoted cluster`, 30_000, async () => ((await senderPort(src, srcPrimary)) === sb.node(standbyLeader).pgPort ? true : undefined));
    await sql(sb, standbyLeader, 'INSERT INTO e2e_standby VALUES (6)');
    await rowEverywhere(src, ['p1', 'p2'], 6);
    // Row 5 was written on the old branch only: the rewind took it away.
    expect(await rows(src, srcPrimary)).to.deep.equal([1, 2, 3, 4, 6]);
    expect(await statusOf(src, srcPrimary, '/standby-leader')).to.equal(200);
    expect(await statusOf(src, srcPrimary, '/primary')).to.equal(503);
  });
});
