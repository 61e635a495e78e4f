import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { startAgent, type RunningAgent } from '../../../../src/app/agent/main.js';
import { Etcd3KeyValue } from '../../../../src/adapters/cluster-store/etcd3-key-value.js';
import { clusterPrefix, ClusterKey } from '../../../../src/adapters/cluster-store/keys.js';
import { startEtcd, type EtcdServer } from '../../../support/etcd-server.js';
import { assertPostgresBinaries, freePort, makeBaseDir, pidAlive, stopPostmasterOf } from '../../../support/postgres-server.js';

async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

function postmasterPid(dataDir: string): number {
  const file = join(dataDir, 'postmaster.pid');
  return existsSync(file) ? Number(readFileSync(file, 'utf8').split('\n')[0]) : 0;
}

describe('agent: a real agent over real etcd and PostgreSQL', function () {
  this.timeout(180_000);
  let etcd: EtcdServer;
  let baseDir: string;
  let agent: RunningAgent | null = null;
  let dataDir: string;
  let pgPid = 0;
  let pgPort = 0;

  before(async () => {
    await assertPostgresBinaries();
    etcd = await startEtcd();
    baseDir = await makeBaseDir();
    dataDir = join(baseDir, 'data');
    pgPort = await freePort();
    const apiPort = await freePort();
    const configPath = join(baseDir, 'node1.yml');
    await writeFile(
      configPath,
      `
scope: itest-agent
namespace: /service
name: node1
restapi:
  listen: 127.0.0.1:${apiPort}
  # A host name, resolved by the agent before its API serves: the test's calls from loopback pass.
  allowlist: [localhost]
etcd3:
  hosts: [${etcd.host}]
bootstrap:
  dcs: {ttl: 20, loop_wait: 2, retry_timeout: 5, maximum_lag_on_failover: 1048576}
  initdb: [{encoding: UTF8}, {locale: C}, no-sync]
db:
  listen: 127.0.0.1:${pgPort}
  data_dir: ${dataDir}
  authentication:
    superuser: {username: postgres, password: su-secret}
    replication: {username: replicator}
  parameters: {unix_socket_directories: ${baseDir}, shared_buffers: 16MB, max_connections: 30, fsync: false}
watchdog: {mode: off}
fencer: {socket: ${join(baseDir, 'fencer.sock')}}
log: {level: warn}
`,
    );
    agent = await startAgent({ configPath, env: {} });
  });

  after(async () => {
    await agent?.stop().catch(() => undefined);
    if (dataDir) await stopPostmasterOf(dataDir).catch(() => undefined);
    await etcd?.cleanup();
    if (baseDir) await rm(baseDir, { recursive: true, force: true });
  });

  it('bootstraps and answers /primary 200 once it holds the leader key', async () => {
    const res = await waitFor('GET /primary 200', async () => {
      const r = await fetch(`${agent!.url}/primary`);
      await r.arrayBuffer();
      return r.status === 200 ? r : undefined;
    }, 120_000);
    expect(res.headers.get('content-type')).to.match(/^application\/json/);
    pgPid = postmasterPid(dataDir);
    expect(pgPid).to.be.above(0);
  });

  it('GET /node: the status document of a running primary', async () => {
    const r = await fetch(`${agent!.url}/node`);
    expect(r.status).to.equal(200);
    const doc = (await r.json()) as Record<string, any>;
    expect(doc['state']).to.equal('running');
    expect(doc['role']).to.equal('primary');
    expect(doc['server_version']).to.be.within(150000, 159999);
    expect(doc['xlog']['location']).to.be.a('number');
    expect(doc['timeline']).to.equal(1);
    expect(doc['database_system_identifier']).to.match(/^\d+$/);
    expect(doc['svc']).to.deep.include({ scope: 'itest-agent', name: 'node1' });
    expect(doc).to.not.have.property('cluster_unlocked');
  });

  it('GET /node?fresh=true: WAL written after the last loop shows at once (what the leader race reads)', async () => {
    const c = new pg.Client({ host: '127.0.0.1', port: pgPort, user: 'postgres', password: 'su-secret', database: 'postgres' });
    await c.connect();
    try {
      await c.query('CREATE TABLE IF NOT EXISTS fresh_probe (v text)');
      await c.query("INSERT INTO fresh_probe SELECT repeat('x', 1000) FROM generate_series(1, 200)");
      const { rows } = await c.query<{ at: string }>("SELECT (pg_current_wal_lsn() - '0/0')::text AS at");
      const written = Number(rows[0]!.at);
      const r = await fetch(`${agent!.url}/node?fresh=true`);
      expect(r.status).to.equal(200);
      const doc = (await r.json()) as Record<string, any>;
      expect(doc['role']).to.equal('primary');
      expect(doc['xlog']['location']).to.be.at.least(written);
      const bad = await fetch(`${agent!.url}/node?fresh=maybe`);
      expect(bad.status).to.equal(400);
      expect(((await bad.json()) as Record<string, any>)['error']).to.equal('invalid_query');
    } finally {
      await c.end();
    }
  });

  it('health checks of the other roles fail on the primary; HEAD carries no body', async () => {
    expect((await fetch(`${agent!.url}/replica`)).status).to.equal(503);
    expect((await fetch(`${agent!.url}/leader`)).status).to.equal(200);
    const head = await fetch(`${agent!.url}/primary`, { method: 'HEAD' });
    expect(head.status).to.equal(200);
    expect(await head.text()).to.equal('');
  });

  it('GET /metrics: svc_* metrics of the running primary', async () => {
    const r = await fetch(`${agent!.url}/metrics`);
    expect(r.status).to.equal(200);
    const text = await r.text();
    const value = (name: string) => Number(new RegExp(`^${name}\\{scope="itest-agent",name="node1"\\} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('svc_primary')).to.equal(1);
    expect(value('svc_database_running')).to.equal(1);
    expect(value('svc_database_state')).to.equal(5);
    expect(value('svc_cluster_unlocked')).to.equal(0);
    expect(value('svc_xlog_location')).to.be.above(0);
    expect(text).to.match(/^svc_loop_duration_seconds_count\{scope="itest-agent",name="node1"\} [1-9]/m);
  });

  it('GET /cluster and PATCH /config go through etcd', async () => {
    const cluster = (await (await fetch(`${agent!.url}/cluster`)).json()) as { members: { name: string; role: string }[] };
    expect(cluster.members.map((m) => [m.name, m.role])).to.deep.equal([['node1', 'leader']]);
    const patched = await fetch(`${agent!.url}/config`, { method: 'PATCH', body: JSON.stringify({ loop_wait: 3 }) });
    expect(patched.status).to.equal(200);
    expect(((await patched.json()) as Record<string, unknown>)['loop_wait']).to.equal(3);
  });

  it('stop(): PostgreSQL stopped cleanly, the leader key released, the member listed as stopped until its lease runs out', async () => {
    await agent!.stop();
    expect(pidAlive(pgPid)).to.equal(false);
    const dcs = new Etcd3KeyValue({ hosts: [etcd.host], prefix: clusterPrefix('/service', 'itest-agent'), retryTimeoutMs: 5000 });
    try {
      const keys = await dcs.readAll();
      expect(keys.get(ClusterKey.leader)).to.equal(undefined);
      expect(JSON.parse(keys.get(ClusterKey.member('node1'))!.value)).to.deep.include({ state: 'stopped', role: 'demoted' });
      expect(keys.get(ClusterKey.initialize)?.value).to.match(/^\d+$/);
    } finally {
      await dcs.close();
    }
    agent = null;
  });
});
