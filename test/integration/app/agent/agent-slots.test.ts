/**
 * Replication slots kept by real agents over real etcd and PostgreSQL 15: two agents (a
 * leader and a replica) with permanent slots in the dynamic configuration. The leader keeps
 * the member and permanent slots and publishes their positions; the replica keeps physical
 * copies for after a failover and a copy of the logical slot; a departed member's slot lives
 * for member_slots_ttl. The steps depend on each other.
 */
import { expect } from 'chai';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { startAgent, type RunningAgent } from '../../../../src/app/agent/main.js';
import { Etcd3KeyValue } from '../../../../src/adapters/cluster-store/etcd3-key-value.js';
import { clusterPrefix, ClusterKey } from '../../../../src/adapters/cluster-store/keys.js';
import { memberToJson } from '../../../../src/adapters/cluster-store/codec.js';
import { startEtcd, type EtcdServer } from '../../../support/etcd-server.js';
import { assertPostgresBinaries, freePort, makeBaseDir, stopPostmasterOf } from '../../../support/postgres-server.js';
import { until } from './agent-binary.js';

const SCOPE = 'itest-slots';
const SLOTS = { archiver: { type: 'physical' }, cdc: { type: 'logical', database: 'postgres', plugin: 'test_decoding' } };

interface Node {
  readonly name: string;
  readonly baseDir: string;
  readonly dataDir: string;
  readonly pgPort: number;
  readonly configPath: string;
  agent: RunningAgent | null;
}

async function nodeConfig(etcd: EtcdServer, name: string): Promise<Node> {
  const baseDir = await makeBaseDir();
  const dataDir = join(baseDir, 'data');
  const [pgPort, apiPort] = [await freePort(), await freePort()];
  const configPath = join(baseDir, `${name}.yml`);
  await writeFile(
    configPath,
    `scope: ${SCOPE}
name: ${name}
restapi: {listen: 127.0.0.1:${apiPort}}
etcd3: {hosts: [${etcd.host}]}
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 1
    retry_timeout: 5
    member_slots_ttl: 8s
    slots: ${JSON.stringify(SLOTS)}
  initdb: [{encoding: UTF8}, {locale: C}, no-sync]
db:
  listen: 127.0.0.1:${pgPort}
  data_dir: ${dataDir}
  authentication:
    superuser: {username: postgres, password: su-secret}
    replication: {username: replicator, password: repl-secret}
  # wal_level is a postmaster parameter: set locally, it is in place from the first start.
  parameters: {unix_socket_directories: ${baseDir}, shared_buffers: 16MB, max_connections: 30, fsync: false, wal_level: logical}
watchdog: {mode: off}
fencer: {enabled: false}
log: {level: warn}
`,
  );
  return { name, baseDir, dataDir, pgPort, configPath, agent: null };
}

async function query<R extends object>(n: Node, text: string): Promise<R[]> {
  const c = new pg.Client({ host: '127.0.0.1', port: n.pgPort, user: 'postgres', password: 'su-secret', database: 'postgres' });
  c.on('error', () => undefined);
  await c.connect();
  try {
    return (await c.query(text)).rows as R[];
  } finally {
    await c.end();
  }
}

const slotNames = async (n: Node): Promise<string[]> => (await query<{ slot_name: string }>(n, 'SELECT slot_name FROM pg_replication_slots ORDER BY 1')).map((r) => r.slot_name);

describe('agent: replication slots kept by a leader and a replica (real etcd and PostgreSQL 15)', function () {
  this.timeout(180_000);
  let etcd: EtcdServer;
  let dcs: Etcd3KeyValue;
  let n1: Node;
  let n2: Node;

  before(async () => {
    await assertPostgresBinaries();
    etcd = await startEtcd();
    dcs = new Etcd3KeyValue({ hosts: [etcd.host], prefix: clusterPrefix('/service', SCOPE), retryTimeoutMs: 5000 });
    n1 = await nodeConfig(etcd, 'node1');
    n2 = await nodeConfig(etcd, 'node2');
  });

  after(async () => {
    for (const n of [n1, n2]) {
      if (!n) continue;
      await n.agent?.stop().catch(() => undefined);
      await stopPostmasterOf(n.dataDir).catch(() => undefined);
      await rm(n.baseDir, { recursive: true, force: true });
    }
    await dcs?.close();
    await etcd?.cleanup();
  });

  it('the leader creates the permanent physical and logical slots, and one for the replica that streams from it', async () => {
    n1.agent = await startAgent({ configPath: n1.configPath, env: {} });
    await until('node1 leading', async () => (await fetch(`${n1.agent!.url}/primary`)).status === 200, 120_000);
    n2.agent = await startAgent({ configPath: n2.configPath, env: {} });
    await until('node2 streaming', async () => (await (await fetch(`${n2.agent!.url}/node`)).json() as { replication_state?: string }).replication_state === 'streaming', 120_000);
    await until('the slots on node1', async () => (await slotNames(n1)).join() === 'archiver,cdc,node2', 30_000);
    await until('node2 streaming through its slot', async () => (await query<{ active: boolean }>(n1, "SELECT active FROM pg_replication_slots WHERE slot_name = 'node2'"))[0]?.active === true, 30_000);
  });

  it('the status key carries the slots\' positions, the leader\'s own, and the retained member slots', async () => {
    await until('status with slots', async () => {
      const status = JSON.parse((await dcs.readAll()).get(ClusterKey.status)?.value ?? '{}') as { slots?: Record<string, number>; retain_slots?: string[] };
      return ['archiver', 'cdc', 'node1', 'node2'].every((s) => typeof status.slots?.[s] === 'number') && status.retain_slots?.join() === 'node2';
    }, 20_000);
  });

  it('the replica keeps a slot for the leader and the permanent ones, the logical one copied from the leader once it holds the WAL the slot needs', async () => {
    await until('the physical slots on node2', async () => ['archiver', 'node1'].every((s) => slotNames(n2).then((names) => names.includes(s))), 30_000);
    // The leader's slot needs WAL from before node2's base backup: no copy until the consumer confirms past it.
    await query(n1, 'CREATE TABLE early (x int); INSERT INTO early VALUES (1)');
    await query(n1, 'CHECKPOINT');
    await query(n1, "SELECT count(*) FROM pg_logical_slot_get_changes('cdc', NULL, NULL)");
    await until('the slots on node2', async () => (await slotNames(n2)).join() === 'archiver,cdc,node1', 90_000);
    const settings = await query<{ setting: string }>(n2, "SELECT setting FROM pg_settings WHERE name = 'hot_standby_feedback'");
    expect(settings[0]!.setting).to.equal('on');
    // The replica's copies follow the leader's positions.
    await query(n1, 'CREATE TABLE moved (x int); INSERT INTO moved SELECT generate_series(1, 20000)');
    await query(n1, "SELECT count(*) FROM pg_logical_slot_get_changes('cdc', NULL, NULL)");
    const onLeader = await query<{ slot_name: string; pos: string }>(n1, "SELECT slot_name, coalesce(confirmed_flush_lsn, restart_lsn)::text AS pos FROM pg_replication_slots WHERE slot_name = 'cdc'");
    await until('the copy of cdc moved to where the consumer confirmed', async () => {
      const rows = await query<{ ok: boolean }>(n2, `SELECT confirmed_flush_lsn >= '${onLeader[0]!.pos}'::pg_lsn AS ok FROM pg_replication_slots WHERE slot_name = 'cdc'`);
      return rows[0]?.ok === true;
    }, 30_000);
  });

  it('member_slots_ttl: a departed member\'s slot outlives its member key for that long, then goes', async () => {
    const record = memberToJson({
      connUrl: 'postgres://127.0.0.1:1/postgres', apiUrl: 'http://127.0.0.1:1', state: 'running', role: 'replica', version: '0.1.0',
      xlogLocation: null, receiveLsn: null, replayLsn: null, replicationState: null, timeline: 1, tags: {}, pendingRestart: false, pendingRestartReason: null, scheduledRestart: null,
    });
    await dcs.put(ClusterKey.member('node9'), record);
    await until('a slot for node9 on the leader and the replica', async () => (await slotNames(n1)).includes('node9') && (await slotNames(n2)).includes('node9'), 20_000);
    await dcs.delete(ClusterKey.member('node9'));
    const gone = Date.now();
    await new Promise((r) => setTimeout(r, 4000));
    expect(await slotNames(n1), 'kept within member_slots_ttl').to.include('node9');
    const status = JSON.parse((await dcs.readAll()).get(ClusterKey.status)!.value) as { retain_slots: string[] };
    expect(status.retain_slots).to.include('node9');
    await until('node9 dropped on both', async () => !(await slotNames(n1)).includes('node9') && !(await slotNames(n2)).includes('node9'), 20_000);
    const keptMs = Date.now() - gone;
    console.log(`      departed member's slot kept ${keptMs} ms (member_slots_ttl 8 s)`);
    expect(keptMs).to.be.at.least(7_000);
  });
});
