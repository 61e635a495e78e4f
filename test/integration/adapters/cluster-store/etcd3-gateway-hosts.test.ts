import { expect } from 'chai';
import { createServer, type Server, type Socket } from 'node:net';
import { Etcd3GatewayKeyValue } from '../../../../src/adapters/cluster-store/etcd3-gateway-key-value.js';
import { DcsUnavailableError } from '../../../../src/domain/errors.js';
import { freePort } from '../../../support/free-port.js';
import { etcdForSuite } from '../../../support/etcd-server.js';
import { expectReportedByProgress } from '../../../support/progress-order.js';

const RETRY_TIMEOUT_MS = 2000;

/** A member that accepts connections and never answers (a hung etcd, a black-holed route). */
async function blackHole(): Promise<{ readonly host: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    host: `127.0.0.1:${port}`,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('Etcd3GatewayKeyValue with several etcd hosts (real etcd)', function () {
  this.timeout(60_000);
  const etcd = etcdForSuite();

  it('a host that refuses connections is passed over for every call, writes included', async () => {
    const dead = `127.0.0.1:${await freePort()}`;
    const kv = new Etcd3GatewayKeyValue({ hosts: [dead, etcd().host], prefix: '/service/hosts1/', retryTimeoutMs: RETRY_TIMEOUT_MS });
    try {
      expect(await kv.put('config', '{}')).to.equal(true);
      expect(await kv.create('initialize', '')).to.be.a('string');
      expect((await kv.readAll()).size).to.equal(2);
    } finally {
      await kv.close();
    }
  });

  it('a host that never answers costs one call its share of the retry timeout; later calls and the watch go to the member that answers', async () => {
    const hole = await blackHole();
    const kv = new Etcd3GatewayKeyValue({ hosts: [hole.host, etcd().host], prefix: '/service/hosts2/', retryTimeoutMs: RETRY_TIMEOUT_MS });
    const seen: string[] = [];
    try {
      let started = Date.now();
      expect((await kv.readAll()).size, 'a read is repeated on the next member').to.equal(0);
      expect(Date.now() - started).to.be.within(900, RETRY_TIMEOUT_MS + 500);
      started = Date.now();
      await kv.keepAlive(5);
      expect(await kv.put('config', '{}')).to.equal(true);
      expect(Date.now() - started, 'the member that answered is asked first').to.be.below(500);
      kv.watch((key) => seen.push(key));
      expect(await kv.whenWatching(5000)).to.equal(true);
      await kv.put('members/a', '{}');
      expect(await kv.progress()).to.be.a('string');
      await expectReportedByProgress(kv, seen, 'members/a');
    } finally {
      await kv.close();
      await hole.close();
    }
  });

  it('a write that may have reached a member that never answered is not repeated elsewhere', async () => {
    const hole = await blackHole();
    const kv = new Etcd3GatewayKeyValue({ hosts: [hole.host, etcd().host], prefix: '/service/hosts3/', retryTimeoutMs: RETRY_TIMEOUT_MS });
    try {
      let error: unknown;
      await kv.create('leader', 'a').catch((e: unknown) => (error = e));
      expect(error).to.be.instanceOf(DcsUnavailableError);
      expect((await kv.readAll()).has('leader'), 'not sent to the other member').to.equal(false);
      expect(await kv.create('leader', 'a'), 'the next call goes to the member that answers').to.be.a('string');
    } finally {
      await kv.close();
      await hole.close();
    }
  });
});
