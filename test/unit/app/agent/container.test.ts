import { Fencer } from '../../../../src/ports/fencer.js';
import { FencerClient } from '../../../../src/adapters/fencer/fencer-client.js';
import { DisabledFencer } from '../../../../src/adapters/fencer/disabled-fencer.js';
import { expect } from 'chai';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { FakeDatabase } from '../../../../src/adapters/database/fake-database.js';
import { Etcd3GatewayClusterStore } from '../../../../src/adapters/cluster-store/etcd3-gateway-cluster-store.js';
import { InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import { InMemoryClusterStore } from '../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import type { AgentServer } from '../../../../src/adapters/http/server.js';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { AgentMetrics } from '../../../../src/adapters/metrics/agent-metrics.js';
import { HttpPeerApi } from '../../../../src/adapters/peer/http-peer-api.js';
import { LinuxWatchdog } from '../../../../src/adapters/watchdog/linux-watchdog.js';
import { NoopWatchdog } from '../../../../src/adapters/watchdog/noop-watchdog.js';
import { AgentTokens, createAgentContainer } from '../../../../src/app/agent/container.js';
import { HaLoop } from '../../../../src/app/agent/ha-loop.js';
import { parseLocalConfig } from '../../../../src/app/agent/local-config.js';
import { FileSettingsSource } from '../../../../src/app/agent/local-settings.js';
import { parseArgs } from '../../../../src/app/agent/agent-args.js';
import { EXIT_INVALID_CONFIG, main } from '../../../../src/app/agent/main.js';
import { AgentControl } from '../../../../src/ports/agent-control.js';
import { AgentMetricsSink } from '../../../../src/ports/agent-metrics.js';
import { Database } from '../../../../src/ports/database.js';
import { ClusterStore } from '../../../../src/ports/cluster-store.js';
import { PeerApi } from '../../../../src/ports/peer-api.js';
import { Watchdog } from '../../../../src/ports/watchdog.js';
import { AgentSettingsSource } from '../../../../src/app/agent/tokens.js';
import { freePort } from '../../../support/free-port.js';
import { makeTlsFiles, type TlsFiles } from '../../adapters/http/tls-fixtures.js';

let apiPort = 0;
const yaml = (extra = '') => `
scope: demo
name: node1
restapi: {listen: 127.0.0.1:${apiPort}${extra}}
etcd3: {hosts: [127.0.0.1:2379]}
db:
  listen: 127.0.0.1:15432
  data_dir: /tmp/warden-never-used
  authentication: {superuser: {username: postgres}, replication: {username: replicator}}
watchdog: {mode: off}
`;

/**
 * The agent's container over fakes (clock, logger, in-memory store unless `realStore`, fake
 * database), with `text` written to `path` as its file.
 */
function overFakes(path: string, text: string, opts: { readonly realStore?: boolean } = {}) {
  writeFileSync(path, text);
  const clock = new FakeClock();
  const logger = new MemoryLogger();
  const c = createAgentContainer({
    config: parseLocalConfig(text),
    configPath: path,
    svcVersion: '1.2.0',
    env: {},
    overrides: {
      clock,
      logger,
      ...(opts.realStore ? {} : { store: new InMemoryClusterStore(new InMemoryKeyValueSpace(clock), { clientId: 'node1' }) }),
      database: new FakeDatabase({ name: 'node1', connUrl: 'postgres://127.0.0.1:15432/postgres', clock }),
    },
  });
  return { c, logger };
}

/**
 * A node's certificate and key files (`role`'s of a first set), and `install` to renew them in
 * place from another set: the certificate only, as a half-done renewal leaves it, or with its key.
 */
function renewableCertificate(dir: string, role: 'server' | 'client') {
  const first = makeTlsFiles();
  const renewed = makeTlsFiles();
  const cert = join(dir, `${role}.pem`);
  const key = join(dir, `${role}.key`);
  const install = (set: TlsFiles, keyToo = true) => {
    copyFileSync(role === 'server' ? set.serverCert : set.clientCert, cert);
    if (keyToo) copyFileSync(role === 'server' ? set.serverKey : set.clientKey, key);
  };
  install(first);
  const fingerprint = (set: TlsFiles) => new X509Certificate(readFileSync(role === 'server' ? set.serverCert : set.clientCert)).fingerprint256;
  const remove = () => {
    first.remove();
    renewed.remove();
  };
  return { first, renewed, cert, key, install, fingerprint, remove };
}

describe('composition root (container.ts, main.ts)', () => {
  let dir: string;
  beforeEach(async () => {
    apiPort = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'warden-container-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('binds the ports to the production adapters', async () => {
    const c = createAgentContainer({ config: parseLocalConfig(yaml()), configPath: join(dir, 'n.yml'), svcVersion: '1.2.0' });
    expect(c.get<ClusterStore>(ClusterStore)).to.be.instanceOf(Etcd3GatewayClusterStore);
    expect(c.get(Watchdog)).to.be.instanceOf(NoopWatchdog);
    expect(c.get(PeerApi)).to.be.instanceOf(HttpPeerApi);
    expect(c.get<Database>(Database).constructor.name).to.equal('PgDatabase');
    expect(c.get(AgentSettingsSource)).to.be.instanceOf(FileSettingsSource);
    const loop = c.get<HaLoop>(AgentTokens.HaLoop);
    expect(loop).to.be.instanceOf(HaLoop);
    expect(c.get(AgentControl)).to.equal(loop);
    expect(c.get(AgentMetricsSink)).to.equal(c.get(AgentTokens.Metrics)).and.be.instanceOf(AgentMetrics);
    await c.get<ClusterStore>(ClusterStore).close();
  });

  it('watchdog mode automatic/required: the fencer drives the device; without a fencer, the agent does', () => {
    const config = parseLocalConfig(yaml().replace('mode: off', 'mode: required'));
    const c = createAgentContainer({ config, configPath: 'x', svcVersion: '1' });
    expect(c.get(Fencer)).to.be.instanceOf(FencerClient);
    expect(c.get(Watchdog)).to.equal(c.get(Fencer));
    const without = parseLocalConfig(yaml().replace('mode: off', 'mode: required') + 'fencer: {enabled: false}\n');
    const d = createAgentContainer({ config: without, configPath: 'x', svcVersion: '1' });
    expect(d.get(Watchdog)).to.be.instanceOf(LinuxWatchdog);
    expect(d.get(Fencer)).to.be.instanceOf(DisabledFencer);
  });

  it("the API's commands count their failed DCS calls in svc_dcs_errors_total, by what they attempted", async () => {
    const clock = new FakeClock();
    const store = new InMemoryClusterStore(new InMemoryKeyValueSpace(clock), { clientId: 'node1' });
    await store.writeConfig({ ttl: 30, loop_wait: 10 }, null);
    const c = createAgentContainer({
      config: parseLocalConfig(yaml()),
      configPath: join(dir, 'n.yml'),
      svcVersion: '1.2.0',
      env: {},
      overrides: { clock, logger: new MemoryLogger(), store, database: new FakeDatabase({ name: 'node1', connUrl: 'postgres://127.0.0.1:15432/postgres', clock }) },
    });
    const server = c.get<AgentServer>(AgentTokens.Server);
    await server.listen();
    const errors = async (operation: string) => {
      const text = await (await fetch(`${server.url()}/metrics`)).text();
      return Number(new RegExp(`^svc_dcs_errors_total\\{scope="demo",name="node1",operation="${operation}"\\} (\\S+)$`, 'm').exec(text)?.[1]);
    };
    try {
      for (const op of ['api_read', 'change_config', 'request_switchover', 'shutdown_release_leader']) expect(await errors(op), op).to.equal(0);
      store.setReachable(false);
      const patch = await fetch(`${server.url()}/config`, { method: 'PATCH', body: JSON.stringify({ pause: true }), headers: { 'content-type': 'application/json' } });
      expect(patch.status).to.equal(503);
      const post = await fetch(`${server.url()}/switchover`, { method: 'POST', body: JSON.stringify({ leader: 'node1', candidate: 'node2' }), headers: { 'content-type': 'application/json' } });
      expect(post.status).to.equal(503);
      // Both failed at their first read, before writing anything; the HA loop (not started) counted nothing.
      expect(await errors('api_read')).to.equal(2);
      expect(await errors('read')).to.equal(0);
    } finally {
      await server.close();
    }
  });

  it('serves the API from the container over fakes; reload applies new credentials', async () => {
    const path = join(dir, 'n.yml');
    const { c } = overFakes(path, yaml());
    const server = c.get<AgentServer>(AgentTokens.Server);
    await server.listen();
    try {
      const node = await fetch(`${server.url()}/node`);
      expect(node.status).to.equal(200);
      expect(((await node.json()) as { svc: unknown }).svc).to.deep.equal({ version: '1.2.0', scope: 'demo', name: 'node1' });
      expect((await fetch(`${server.url()}/reload`, { method: 'POST' })).status).to.equal(202);

      writeFileSync(path, yaml(', authentication: {username: admin, password: pw}, http_extra_headers: {X-A: b}'));
      await c.get<FileSettingsSource>(AgentTokens.LocalSettings).reload();
      const denied = await fetch(`${server.url()}/reload`, { method: 'POST' });
      expect(denied.status).to.equal(401);
      expect(denied.headers.get('x-a')).to.equal('b');
      const allowed = await fetch(`${server.url()}/reload`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from('admin:pw').toString('base64')}` } });
      expect(allowed.status).to.equal(202);
    } finally {
      await server.close();
    }
  });

  it('reload reads the REST API certificate files again: a certificate renewed in place serves new connections, a broken one is refused', async () => {
    const api = renewableCertificate(dir, 'server');
    const { first, renewed } = api;
    const { c, logger } = overFakes(join(dir, 'n.yml'), yaml(`, certfile: ${api.cert}, keyfile: ${api.key}`));
    const server = c.get<AgentServer>(AgentTokens.Server);
    const { port } = await server.listen();
    const served = () =>
      new Promise<string>((resolve, reject) => {
        const s = tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
          resolve(s.getPeerX509Certificate()!.fingerprint256);
          s.end();
        });
        s.on('error', reject);
      });
    try {
      expect(await served()).to.equal(api.fingerprint(first));
      api.install(renewed);
      await c.get<FileSettingsSource>(AgentTokens.LocalSettings).reload();
      expect(await served(), 'the renewed certificate').to.equal(api.fingerprint(renewed));
      expect(logger.messages('info').some((m) => /certificate files read again/.test(m))).to.equal(true);
      // A key that does not fit (the certificate copied, not yet its key): the one in force stays.
      api.install(first, false);
      await c.get<FileSettingsSource>(AgentTokens.LocalSettings).reload();
      expect(await served()).to.equal(api.fingerprint(renewed));
      expect(logger.messages('error').some((m) => /could not be read again: the ones in force stay/.test(m))).to.equal(true);
    } finally {
      await server.close();
      api.remove();
    }
  });

  it("reload reads etcd's client certificate files again: new connections to etcd present the renewed one", async () => {
    const client = renewableCertificate(dir, 'client');
    const { first, renewed, cert, key } = client;
    // Stands in for etcd's JSON gateway: notes the client certificate of each request, answers an empty range.
    const presented: string[] = [];
    const etcd = createHttpsServer({ cert: first.read(first.serverCert), key: first.read(first.serverKey), requestCert: true, rejectUnauthorized: false }, (req, res) => {
      presented.push((req.socket as TLSSocket).getPeerX509Certificate()?.fingerprint256 ?? 'none');
      req.resume();
      req.on('end', () => res.end(JSON.stringify({ header: { revision: '1' }, kvs: [], count: '0' })));
    });
    await new Promise<void>((r) => etcd.listen(0, '127.0.0.1', r));
    const etcdLine = `etcd3: {hosts: [127.0.0.1:${(etcd.address() as AddressInfo).port}], protocol: https, cacert: ${first.caCert}, cert: ${cert}, key: ${key}}`;
    const { c, logger } = overFakes(join(dir, 'n.yml'), yaml().replace('etcd3: {hosts: [127.0.0.1:2379]}', etcdLine), { realStore: true });
    const store = c.get<ClusterStore>(ClusterStore);
    try {
      await store.read();
      expect(presented.at(-1)).to.equal(client.fingerprint(first));
      client.install(renewed);
      await c.get<FileSettingsSource>(AgentTokens.LocalSettings).reload();
      await store.read();
      expect(presented.at(-1), 'the renewed certificate').to.equal(client.fingerprint(renewed));
      expect(logger.messages('info').some((m) => /etcd client certificate files read again/.test(m))).to.equal(true);
      // The certificate renewed but its key not yet: refused, the one in force stays.
      client.install(first, false);
      await c.get<FileSettingsSource>(AgentTokens.LocalSettings).reload();
      await store.read();
      expect(presented.at(-1)).to.equal(client.fingerprint(renewed));
      expect(logger.messages('error').some((m) => /etcd client certificate files could not be read again: the ones in force stay/.test(m))).to.equal(true);
    } finally {
      await store.close();
      await new Promise<void>((r) => etcd.close(() => r()));
      client.remove();
    }
  });

  it('warden -c file / warden file; no file is an error', () => {
    expect(parseArgs(['-c', 'a.yml'], '1')).to.equal('a.yml');
    expect(parseArgs(['--config', 'a.yml'], '1')).to.equal('a.yml');
    expect(parseArgs(['b.yml'], '1')).to.equal('b.yml');
    expect(() => parseArgs([], '1')).to.throw(/configuration file is required/);
  });

  it('main: an invalid file exits with code 2 and lists every problem on stderr', async () => {
    const path = join(dir, 'bad.yml');
    writeFileSync(path, 'scope: demo\nname: node1\nrestapi: {listen: nowhere}\n');
    const written: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((s: string) => {
      written.push(String(s));
      return true;
    }) as typeof process.stderr.write;
    let code: number;
    try {
      code = await main(['-c', path], {});
    } finally {
      process.stderr.write = write;
    }
    expect(code).to.equal(EXIT_INVALID_CONFIG);
    const text = written.join('');
    expect(text).to.include('restapi.listen').and.include('etcd3').and.include('db');
  });
});
