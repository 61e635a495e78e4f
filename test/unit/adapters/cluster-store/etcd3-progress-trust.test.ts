import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Etcd3ProgressTrust, fetchEtcdVersion, progressInOrder } from '../../../../src/adapters/cluster-store/etcd3-progress-trust.js';

/** A loopback server answering GET /version with `answer()` (null: no answer at all, the socket is dropped). */
async function versionServer(answer: () => string | null): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const body = answer();
    if (body === null || req.url !== '/version') return req.socket.destroy();
    res.writeHead(200, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const until = async (what: string, ok: () => boolean): Promise<void> => {
  for (let i = 0; i < 200 && !ok(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(ok(), what).to.equal(true);
};

describe('Etcd3ProgressTrust: whether etcd answers watch progress requests in order', () => {
  it('trusts the releases that send the answer behind every queued change, and no older one', () => {
    for (const v of ['3.4.31', '3.4.40', '3.5.13', '3.5.21', '3.6.0', '3.6.5', '4.0.0']) expect(progressInOrder(v), v).to.equal(true);
    for (const v of ['3.4.23', '3.4.30', '3.5.0', '3.5.12', '3.3.27', '2.3.8', 'unknown', '']) expect(progressInOrder(v), v).to.equal(false);
  });

  it('reads the version from etcd\'s /version answer; nothing from a member that does not answer', async () => {
    const good = await versionServer(() => '{"etcdserver":"3.5.13","etcdcluster":"3.5.0"}');
    const bad = await versionServer(() => 'not json');
    const mute = await versionServer(() => null);
    try {
      expect(await fetchEtcdVersion(good.url, {}, 1000)).to.equal('3.5.13');
      expect(await fetchEtcdVersion(bad.url, {}, 1000)).to.equal(null);
      expect(await fetchEtcdVersion(mute.url, {}, 1000)).to.equal(null);
      expect(await fetchEtcdVersion('http://127.0.0.1:1', {}, 1000)).to.equal(null);
    } finally {
      await Promise.all([good.close(), bad.close(), mute.close()]);
    }
  });

  it('trusts nothing until asked and answered; one member behind is enough to distrust; asked again, it follows an upgrade', async () => {
    let v1 = '3.4.23';
    const m1 = await versionServer(() => `{"etcdserver":"${v1}"}`);
    const m2 = await versionServer(() => '{"etcdserver":"3.5.13"}');
    const trust = new Etcd3ProgressTrust([m1.url, m2.url, 'http://127.0.0.1:1'], () => ({}), () => 500);
    try {
      expect(trust.current).to.deep.equal({ trusted: false, why: null });
      trust.recheck();
      await until('an answer', () => trust.current.why !== null);
      expect(trust.current.trusted).to.equal(false);
      expect(trust.current.why).to.match(/etcd 3\.4\.23 may answer a watch progress request ahead/);
      v1 = '3.4.31';
      trust.recheck();
      expect(trust.current, 'not trusted while asking').to.deep.equal({ trusted: false, why: null });
      await until('trusted', () => trust.current.trusted);
    } finally {
      trust.stop();
      await Promise.all([m1.close(), m2.close()]);
    }
  });

  it('no member telling its version: not trusted, and says where it asked', async () => {
    const mute = await versionServer(() => null);
    const trust = new Etcd3ProgressTrust([mute.url], () => ({}), () => 500);
    try {
      trust.recheck();
      await until('a reason', () => trust.current.why !== null);
      expect(trust.current.trusted).to.equal(false);
      expect(trust.current.why).to.include(`GET /version on ${mute.url}`);
    } finally {
      trust.stop();
      await mute.close();
    }
  });
});
