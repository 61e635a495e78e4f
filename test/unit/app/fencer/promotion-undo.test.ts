import { expect } from 'chai';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { InMemoryClusterStore } from '../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { undoUnfinishedPromotion } from '../../../../src/app/fencer/promotion-undo.js';

describe('fencer: the sync key of a promotion that never happened', () => {
  async function setUp() {
    const space = new InMemoryKeyValueSpace(new FakeClock());
    const store = new InMemoryClusterStore(space, { clientId: 'fencer', watchedCopy: false });
    expect(await store.writeSync({ leader: 'node1', syncStandby: ['node2'], quorum: 0 }, null)).to.equal(true);
    const old = (await store.read()).sync!;
    // node2 took the key and wrote this just before promoting.
    expect(await store.writeSync({ leader: 'node2', syncStandby: [], quorum: 0, promoting: { timeline: 3, replaced: { leader: 'node1', syncStandby: ['node2'], quorum: 0 } } }, old.revision)).to.equal(true);
    return { store, logger: new MemoryLogger() };
  }

  it('is put back when the stopped server is still in recovery on its timeline; the log says so', async () => {
    const { store, logger } = await setUp();
    await undoUnfinishedPromotion(store, 'node2', async () => ({ inRecovery: true, timeline: 3 }), logger);
    const sync = (await store.read()).sync!;
    expect({ leader: sync.leader, syncStandby: sync.syncStandby, quorum: sync.quorum, promoting: sync.promoting }).to.deep.equal({ leader: 'node1', syncStandby: ['node2'], quorum: 0, promoting: undefined });
    expect(logger.messages().join('\n')).to.match(/stopped before it promoted/);
  });

  it('stays when the server may have promoted, or it belongs to another node; nothing throws when the store fails', async () => {
    const { store, logger } = await setUp();
    await undoUnfinishedPromotion(store, 'node2', async () => ({ inRecovery: false, timeline: 4 }), logger);
    await undoUnfinishedPromotion(store, 'node3', async () => ({ inRecovery: true, timeline: 3 }), logger);
    expect((await store.read()).sync!.leader).to.equal('node2');
    expect(logger.messages().join('\n')).to.match(/may have promoted/);
    const broken = { read: async () => Promise.reject(new Error('etcd is down')) } as unknown as InMemoryClusterStore;
    await undoUnfinishedPromotion(broken, 'node2', async () => ({ inRecovery: true, timeline: 3 }), logger);
    expect(logger.messages().at(-1)!).to.match(/could not read or put back the sync key/);
  });
});
