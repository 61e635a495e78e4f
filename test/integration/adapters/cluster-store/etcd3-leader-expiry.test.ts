import { expect } from 'chai';
import { Etcd3 } from 'etcd3';
import { Etcd3KeyValue } from '../../../../src/adapters/cluster-store/etcd3-key-value.js';
import { clusterPrefix, ClusterKey } from '../../../../src/adapters/cluster-store/keys.js';
import { startEtcd, type EtcdServer } from '../../../support/etcd-server.js';

const TTL_SECONDS = 3;
const RETRY_TIMEOUT_MS = 2000;

describe('Etcd3KeyValue: a leader that stops refreshing (real etcd)', function () {
  this.timeout(30_000);
  let server: EtcdServer;
  const closers: Array<() => Promise<unknown>> = [];

  before(async () => {
    server = await startEtcd();
  });

  after(async () => {
    for (const close of closers.reverse()) await close();
    await server?.cleanup();
  });

  it(`loses the leader key within ttl + 1 s, and a watching agent takes it within 1 s of expiry`, async () => {
    const prefix = clusterPrefix('/warden-expiry', 'demo');
    const dcs = (retryTimeoutMs = RETRY_TIMEOUT_MS) => {
      const c = new Etcd3KeyValue({ hosts: [server.host], prefix, retryTimeoutMs });
      closers.push(() => c.close());
      return c;
    };
    const a = dcs();
    const b = dcs();

    // An independent observer (plain etcd3 client) timestamps the delete event etcd emits on expiry.
    const observer = new Etcd3({ hosts: server.endpoint });
    closers.push(async () => observer.close());
    const leaderWatch = await observer.watch().key(prefix + ClusterKey.leader).create();
    closers.push(() => leaderWatch.cancel());
    let expiredAt = 0;
    leaderWatch.on('delete', () => (expiredAt ||= Date.now()));

    // B: an agent whose only trigger is its watch. Its own tick renews B's lease, nothing else.
    expect(await b.keepAlive(TTL_SECONDS)).to.equal(false);
    const bTick = setInterval(() => void b.keepAlive(TTL_SECONDS).catch(() => undefined), (TTL_SECONDS * 1000) / 3);
    closers.push(async () => clearInterval(bTick));
    let acquiredAt = 0;
    let attempts = 0;
    const acquired = new Promise<void>((resolve) => {
      b.watch((key) => {
        if (key !== ClusterKey.leader || acquiredAt) return;
        attempts++;
        void b.create(ClusterKey.leader, 'b', { leased: true }).then(
          (won) => {
            if (won && !acquiredAt) {
              acquiredAt = Date.now();
              resolve();
            }
          },
          () => undefined,
        );
      });
    });

    // A takes the key, refreshes once more, then stops (a hung primary).
    expect(await a.keepAlive(TTL_SECONDS)).to.equal(false);
    expect(await a.create(ClusterKey.leader, 'a', { leased: true })).to.be.a('string');
    await new Promise((r) => setTimeout(r, 500));
    const keepAliveSentAt = Date.now();
    expect(await a.keepAlive(TTL_SECONDS)).to.equal(true);
    const lastKeepAliveAt = Date.now();

    await acquired;
    expect(expiredAt, 'observer saw the expiry').to.be.greaterThan(0);
    const keyLifeMs = expiredAt - lastKeepAliveAt;
    const takeoverMs = acquiredAt - expiredAt;
    console.log(
      `      measured (ttl ${TTL_SECONDS} s): last keepalive -> key expired ${keyLifeMs} ms ` +
        `(keepalive round trip ${lastKeepAliveAt - keepAliveSentAt} ms); ` +
        `expiry -> second agent holds the key ${takeoverMs} ms (watch-driven, ${attempts} create attempts)`,
    );
    expect(keyLifeMs, 'A loses the key within ttl + 1 s of its last keepalive').to.be.at.most(TTL_SECONDS * 1000 + 1000);
    // etcd renews the lease between the send and the answer, so the key lives at least ttl from the send.
    expect(expiredAt - keepAliveSentAt, "not before the ttl").to.be.at.least(TTL_SECONDS * 1000);
    expect(takeoverMs, 'B holds the key within 1 s of expiry').to.be.lessThan(1000);
    expect((await a.readAll()).get(ClusterKey.leader)?.value).to.equal('b');
    // A, back from its stall, finds it has lost the key: its refresh (compare value) fails.
    expect(await a.keepAlive(TTL_SECONDS)).to.equal(false);
    expect(await a.put(ClusterKey.leader, 'a', { leased: true, if: { value: 'a' } })).to.equal(false);
  });
});
