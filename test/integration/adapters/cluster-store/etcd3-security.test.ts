import { expect } from 'chai';
import { rm } from 'node:fs/promises';
import { Etcd3KeyValue, type Etcd3KeyValueOptions } from '../../../../src/adapters/cluster-store/etcd3-key-value.js';
import { DcsUnavailableError } from '../../../../src/domain/errors.js';
import { enableEtcdAuth, startEtcd, type EtcdServer } from '../../../support/etcd-server.js';
import { makeTestPki, type TestPki } from './tls-certs.js';

const RETRY_TIMEOUT_MS = 1500;
const PREFIX = '/service/secure/';

/** Runs one adapter round trip (lease, leased create, read) and closes the client. */
async function roundTrip(opts: Etcd3KeyValueOptions): Promise<string | undefined> {
  const dcs = new Etcd3KeyValue(opts);
  try {
    await dcs.keepAlive(5);
    await dcs.create('leader', 'node1', { leased: true });
    return (await dcs.readAll()).get('leader')?.value;
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

describe('Etcd3KeyValue: TLS and password auth (real etcd)', function () {
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

    it('fails with DcsUnavailableError without a client certificate, or over plain http', async () => {
      await expectUnavailable({ hosts: [server.host], prefix: PREFIX, retryTimeoutMs: RETRY_TIMEOUT_MS, protocol: 'https', cacert: pki.caFile });
      await expectUnavailable({ hosts: [server.host], prefix: PREFIX, retryTimeoutMs: RETRY_TIMEOUT_MS, protocol: 'http' });
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

    it('fails with DcsUnavailableError with a wrong password, without credentials, or outside the granted prefix', async () => {
      await expectUnavailable({ hosts: [server.host], prefix: PREFIX, retryTimeoutMs: RETRY_TIMEOUT_MS, username: 'warden', password: 'wrong' });
      await expectUnavailable({ hosts: [server.host], prefix: PREFIX, retryTimeoutMs: RETRY_TIMEOUT_MS });
      await expectUnavailable({ hosts: [server.host], prefix: '/service/other/', retryTimeoutMs: RETRY_TIMEOUT_MS, username: 'warden', password: 'secret' });
    });
  });
});
