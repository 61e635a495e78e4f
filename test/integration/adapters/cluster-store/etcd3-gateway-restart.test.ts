/**
 * etcd restarting (every member refusing connections for a second or two) is not an outage
 * to the gateway client: a call tries the members again until its retry timeout, so a leader
 * does not demote over a blip. Past the retry timeout it gives up as before.
 */
import { expect } from 'chai';
import { Etcd3GatewayKeyValue } from '../../../../src/adapters/cluster-store/etcd3-gateway-key-value.js';
import { clusterPrefix } from '../../../../src/adapters/cluster-store/keys.js';
import { DcsUnavailableError } from '../../../../src/domain/errors.js';
import { startEtcd, type EtcdServer } from '../../../support/etcd-server.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('Etcd3GatewayKeyValue: etcd restarting within the retry timeout', function () {
  this.timeout(60_000);
  let etcd: EtcdServer;
  const clients: Etcd3GatewayKeyValue[] = [];
  const client = (retryTimeoutMs: number, unreachableRetryMs?: number) => {
    const c = new Etcd3GatewayKeyValue({ hosts: [etcd.host], prefix: clusterPrefix('/service', 'restart'), retryTimeoutMs, ...(unreachableRetryMs !== undefined ? { unreachableRetryMs } : {}) });
    clients.push(c);
    return c;
  };

  /** A read while etcd is stopped (started again afterwards): it must fail with DcsUnavailableError; the error and how long it took. */
  const readWhileDown = async (kv: Etcd3GatewayKeyValue): Promise<{ error: unknown; ms: number }> => {
    await etcd.kill();
    try {
      const started = Date.now();
      const error = await kv.readAll().then(() => null, (e: unknown) => e);
      expect(error).to.be.instanceOf(DcsUnavailableError);
      return { error, ms: Date.now() - started };
    } finally {
      await etcd.restart();
    }
  };

  before(async () => {
    etcd = await startEtcd();
  });
  after(async () => {
    for (const c of clients) await c.close();
    await etcd?.cleanup();
  });

  it('a read while etcd is down for ~1.5 s waits for it and answers; a write that was refused is sent again', async () => {
    const kv = client(8000);
    await kv.put('config', '{"ttl":30}');
    await etcd.kill();
    const back = sleep(1500).then(() => etcd.restart());
    const started = Date.now();
    const [snapshot] = await Promise.all([kv.readAll(), back]);
    const ms = Date.now() - started;
    console.log(`      read answered ${ms} ms after etcd went down`);
    expect(snapshot.get('config')?.value).to.equal('{"ttl":30}');
    expect(ms).to.be.within(1000, 8000);
    await etcd.kill();
    const again = sleep(1000).then(() => etcd.restart());
    await Promise.all([kv.put('config', '{"ttl":40}'), again]);
    expect((await kv.readAll()).get('config')?.value).to.equal('{"ttl":40}');
  });

  it('a shorter window for members that take no connection (wardenctl): gives up after it, and still rides out a shorter restart', async () => {
    const kv = client(8000, 2000);
    await kv.put('config', '{"ttl":30}');
    const { error, ms } = await readWhileDown(kv);
    expect(String((error as Error).message)).to.contain('ECONNREFUSED');
    expect(ms, 'gave up after the unreachable window, not the retry timeout').to.be.within(1000, 3500);
    await etcd.kill();
    const back = sleep(800).then(() => etcd.restart());
    const [snapshot] = await Promise.all([kv.readAll(), back]);
    expect(snapshot.get('config')?.value).to.equal('{"ttl":30}');
  });

  it('down for longer than the retry timeout: DcsUnavailableError at about the retry timeout', async () => {
    const kv = client(1000);
    await kv.readAll();
    const { ms } = await readWhileDown(kv);
    expect(ms).to.be.within(500, 3000);
  });
});
