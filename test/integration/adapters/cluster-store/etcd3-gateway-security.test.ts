import { expect } from 'chai';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3GatewayKeyValue } from '../../../../src/adapters/cluster-store/etcd3-gateway-key-value.js';
import type { Etcd3KeyValueOptions } from '../../../../src/adapters/cluster-store/etcd3-options.js';
import { DcsUnavailableError } from '../../../../src/domain/errors.js';
import { expectReportedByProgress } from '../../../support/progress-order.js';
import { enableEtcdAuth, etcdctl, startEtcd, type EtcdServer } from '../../../support/etcd-server.js';
import { makeTestPki, type TestPki } from './tls-certs.js';

const RETRY_TIMEOUT_MS = 1500;
const PREFIX = '/service/secure/';
// The same checks as the gRPC adapter's, on the client wardenctl uses.

/**
 * Runs one adapter round trip (lease, leased create, read, and a watch that reports the
 * create and answers a progress request: the agent's watched copy) and closes the client.
 */
async function roundTrip(opts: Etcd3KeyValueOptions): Promise<string | undefined> {
  const dcs = new Etcd3GatewayKeyValue(opts);
  const seen: string[] = [];
  dcs.watch((key) => seen.push(key));
  try {
    await dcs.keepAlive(5);
    await dcs.create('leader', 'node1', { leased: true });
    const value = (await dcs.readAll()).get('leader')?.value;
    expect(await dcs.whenWatching(RETRY_TIMEOUT_MS), 'the watch stream is up').to.equal(true);
    await dcs.put('config', '{}');
    const revision = await dcs.progress();
    expect(revision, 'a progress answer').to.be.a('string');
    expect(BigInt(revision!) >= BigInt(dcs.writtenRevision())).to.equal(true);
    await expectReportedByProgress(dcs, seen, 'config');
    return value;
  } finally {
    await dcs.revokeLease().catch(() => undefined);
    await dcs.close();
  }
}

async function expectUnavailable(opts: Etcd3KeyValueOptions): Promise<void> {
  const started = Date.now();
  const error = await roundTrip(opts).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).to.be.instanceOf(DcsUnavailableError);
  expect(Date.now() - started).to.be.at.most(RETRY_TIMEOUT_MS + 1000);
}

describe('Etcd3GatewayKeyValue (JSON gateway): TLS and password auth (real etcd)', function () {
  this.timeout(30_000);

  describe('TLS with client certificates', () => {
    let pki: TestPki;
    let server: EtcdServer;

    before(async () => {
      pki = await makeTestPki();
      server = await startEtcd({
        tls: {
          certFile: pki.serverCertFile,
          keyFile: pki.serverKeyFile,
          caFile: pki.caFile,
          clientCertAuth: true,
          clientCertFile: pki.clientCertFile,
          clientKeyFile: pki.clientKeyFile,
        },
      });
    });

    after(async () => {
      await server?.cleanup();
      if (pki) await rm(pki.dir, { recursive: true, force: true });
    });

    it('works over https with cacert, cert and key', async () => {
      const value = await roundTrip({
        hosts: [server.host],
        prefix: PREFIX,
        retryTimeoutMs: RETRY_TIMEOUT_MS,
        protocol: 'https',
        cacert: pki.caFile,
        cert: pki.clientCertFile,
        key: pki.clientKeyFile,
      });
      expect(value).to.equal('node1');
    });

    it('picks https from the TLS files when no protocol is given', async () => {
      const value = await roundTrip({
        hosts: [server.host],
        prefix: PREFIX,
        retryTimeoutMs: RETRY_TIMEOUT_MS,
        cacert: pki.caFile,
        cert: pki.clientCertFile,
        key: pki.clientKeyFile,
      });
      expect(value).to.equal('node1');
    });

    it('takes client certificate files renewed in place on reloadCredentials; unreadable or mismatched files leave the ones in force', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'warden-etcd-cert-'));
      const other = await makeTestPki();
      const cert = join(dir, 'client.crt');
      const key = join(dir, 'client.key');
      const files = { cacert: pki.caFile, cert, key };
      const install = async (c: string, k: string) => {
        await copyFile(c, cert);
        await copyFile(k, key);
      };
      await install(pki.clientCertFile, pki.clientKeyFile);
      const dcs = new Etcd3GatewayKeyValue({ hosts: [server.host], prefix: PREFIX, retryTimeoutMs: RETRY_TIMEOUT_MS, protocol: 'https', ...files });
      try {
        await dcs.put('reload', 'a');
        expect(dcs.reloadCredentials(files), 'same files').to.deep.equal({ tls: false, user: false });
        // A certificate of a CA etcd does not trust (a revoked or foreign one): new connections are refused.
        await install(other.clientCertFile, other.clientKeyFile);
        expect(dcs.reloadCredentials(files)).to.deep.equal({ tls: true, user: false });
        const refused = await dcs.readAll().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(refused, 'the foreign certificate is presented').to.be.instanceOf(DcsUnavailableError);
        // Renewed again with a good one: no restart needed.
        await install(pki.noCnCertFile, pki.noCnKeyFile);
        expect(dcs.reloadCredentials(files).tls).to.equal(true);
        expect((await dcs.readAll()).get('reload')?.value).to.equal('a');
        // A key that does not fit its certificate, or a file that is gone: refused, the good ones stay.
        await copyFile(other.clientKeyFile, key);
        expect(() => dcs.reloadCredentials(files)).to.throw();
        expect(() => dcs.reloadCredentials({ ...files, cert: join(dir, 'missing.crt') })).to.throw(/ENOENT/);
        await dcs.put('reload', 'b');
        expect((await dcs.readAll()).get('reload')?.value).to.equal('b');
      } finally {
        await dcs.close();
        await rm(dir, { recursive: true, force: true });
        await rm(other.dir, { recursive: true, force: true });
      }
    });

    it('fails with DcsUnavailableError without a client certificate, or over plain http', async () => {
      await expectUnavailable({ hosts: [server.host], prefix: PREFIX, retryTimeoutMs: RETRY_TIMEOUT_MS, protocol: 'https', cacert: pki.caFile });
      await expectUnavailable({ hosts: [server.host], prefix: PREFIX, retryTimeoutMs: RETRY_TIMEOUT_MS, protocol: 'http' });
    });
  });

  describe('client certificates and a password together (the security guide)', () => {
    let pki: TestPki;
    let server: EtcdServer;

    before(async () => {
      pki = await makeTestPki();
      server = await startEtcd({
        tls: { certFile: pki.serverCertFile, keyFile: pki.serverKeyFile, caFile: pki.caFile, clientCertAuth: true, clientCertFile: pki.clientCertFile, clientKeyFile: pki.clientKeyFile },
      });
      await enableEtcdAuth(server, PREFIX, ['--cacert', pki.caFile, '--cert', pki.serverCertFile, '--key', pki.serverKeyFile]);
    });

    after(async () => {
      await server?.cleanup();
      if (pki) await rm(pki.dir, { recursive: true, force: true });
    });

    const tlsAuth = (cert: string, key: string): Etcd3KeyValueOptions => ({
      hosts: [server.host],
      prefix: PREFIX,
      retryTimeoutMs: RETRY_TIMEOUT_MS,
      protocol: 'https',
      cacert: pki.caFile,
      cert,
      key,
      username: 'warden',
      password: 'secret',
    });

    it('works with a client certificate without a CN', async () => {
      expect(await roundTrip(tlsAuth(pki.noCnCertFile, pki.noCnKeyFile))).to.equal('node1');
    });

    it('a client certificate with a CN is refused by etcd, and the error says what to do', async () => {
      const error = await roundTrip(tlsAuth(pki.clientCertFile, pki.clientKeyFile)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).to.be.instanceOf(DcsUnavailableError);
      expect(String((error as Error).message)).to.match(/CommonName.*certificate without a CN/);
    });
  });

  describe('username and password', () => {
    let server: EtcdServer;

    before(async () => {
      server = await startEtcd();
      await enableEtcdAuth(server, PREFIX);
    });

    after(async () => {
      await server?.cleanup();
    });

    it('works with the right credentials', async () => {
      const value = await roundTrip({ hosts: [server.host], prefix: PREFIX, retryTimeoutMs: RETRY_TIMEOUT_MS, username: 'warden', password: 'secret' });
      expect(value).to.equal('node1');
    });

    it('authenticates again with a password changed by reloadCredentials', async () => {
      const dcs = new Etcd3GatewayKeyValue({ hosts: [server.host], prefix: PREFIX, retryTimeoutMs: RETRY_TIMEOUT_MS, username: 'warden', password: 'secret' });
      try {
        await dcs.put('rotated', 'a');
        await etcdctl(server.host, ['--user', 'root:rootpw', 'user', 'passwd', 'warden', '--interactive=false'], 'rotated-pw\n');
        expect(dcs.reloadCredentials({ username: 'warden', password: 'secret' })).to.deep.equal({ tls: false, user: false });
        // The token in hand may outlive the change; a wrong password shows the next call authenticates anew.
        expect(dcs.reloadCredentials({ username: 'warden', password: 'wrong' })).to.deep.equal({ tls: false, user: true });
        const refused = await dcs.readAll().then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(refused).to.be.instanceOf(DcsUnavailableError);
        dcs.reloadCredentials({ username: 'warden', password: 'rotated-pw' });
        expect((await dcs.readAll()).get('rotated')?.value).to.equal('a');
      } finally {
        await dcs.close();
        await etcdctl(server.host, ['--user', 'root:rootpw', 'user', 'passwd', 'warden', '--interactive=false'], 'secret\n');
      }
    });

    it('fails with DcsUnavailableError with a wrong password, without credentials, or outside the granted prefix', async () => {
      await expectUnavailable({ hosts: [server.host], prefix: PREFIX, retryTimeoutMs: RETRY_TIMEOUT_MS, username: 'warden', password: 'wrong' });
      await expectUnavailable({ hosts: [server.host], prefix: PREFIX, retryTimeoutMs: RETRY_TIMEOUT_MS });
      await expectUnavailable({ hosts: [server.host], prefix: '/service/other/', retryTimeoutMs: RETRY_TIMEOUT_MS, username: 'warden', password: 'secret' });
    });
  });
});
