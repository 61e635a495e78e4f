import { expect } from 'chai';
import { EMPTY_CLUSTER, type Cluster, type Leader, type Member, type StoredConfig } from '../../../../src/domain/cluster/model/cluster.js';
import type { RawConfig } from '../../../../src/domain/cluster/config/config.js';
import type { ClusterStore } from '../../../../src/ports/cluster-store.js';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { NullLogger } from '../../../../src/adapters/logger/null-logger.js';
import { AgentMemory } from '../../../../src/app/agent/agent-memory.js';
import { ClusterObserver } from '../../../../src/app/agent/cluster-observer.js';

describe('app/agent: ClusterObserver', () => {
  /** An observer over a store whose read answers the cluster given by `next`. */
  function observer(bootstrap: RawConfig) {
    let config: StoredConfig | null = null;
    const store = {
      read: async (): Promise<Cluster> => Object.freeze({ ...EMPTY_CLUSTER, initialize: '7300', config }),
      setRetryTimeout: () => undefined,
    } as unknown as ClusterStore;
    const o = new ClusterObserver(store, new FakeClock(), new NullLogger(), new AgentMemory(), null, () => bootstrap);
    return {
      o,
      async read(next: StoredConfig | null) {
        config = next;
        await o.observe();
        return o.current.config;
      },
    };
  }
  const unreadable = (revision: string): StoredConfig => ({ value: {}, revision, unreadable: true });

  it('an unreadable configuration key keeps the configuration last read: synchronous and maintenance mode stay on (its empty value turned them off)', async () => {
    const { read } = await observer({});
    const first = await read({ value: { synchronous_mode: true, pause: true, ttl: 40 }, revision: '3' });
    expect(first).to.include({ synchronous_mode: true, pause: true, ttl: 40 });
    expect(await read(unreadable('4'))).to.include({ synchronous_mode: true, pause: true, ttl: 40 });
    // A readable value again is taken as it is, an empty one included.
    expect(await read({ value: {}, revision: '5' })).to.include({ synchronous_mode: false, pause: false, ttl: 30 });
  });

  it('unreadable from the first read on: the local bootstrap configuration decides, as with no key', async () => {
    const { read } = await observer({ synchronous_mode: true, loop_wait: 5 });
    expect(await read(unreadable('2'))).to.include({ synchronous_mode: true, loop_wait: 5 });
  });

  it('remembers the last leader and its address while the key is free, for the race to ask it (its member key may have gone with its lease)', async () => {
    let view: Cluster = EMPTY_CLUSTER;
    const store = { read: async () => view, setRetryTimeout: () => undefined } as unknown as ClusterStore;
    const o = new ClusterObserver(store, new FakeClock(), new NullLogger(), new AgentMemory(), null, () => ({}));
    const member = (name: string, apiUrl: string) => ({ name, apiUrl }) as unknown as Member;
    const leader = (name: string) => ({ name }) as unknown as Leader;
    await o.observe();
    expect(o.formerLeader, 'no leader seen yet').to.equal(null);
    view = { ...EMPTY_CLUSTER, leader: leader('node3'), members: [member('node1', 'http://a:8008'), member('node3', 'http://c:8008')] };
    await o.observe();
    expect(o.formerLeader, 'a leader holds the key').to.equal(null);
    // The lease went early: both of node3's keys are gone together.
    view = { ...EMPTY_CLUSTER, members: [member('node1', 'http://a:8008')] };
    await o.observe();
    expect(o.formerLeader).to.deep.equal({ name: 'node3', apiUrl: 'http://c:8008' });
    // A new leader whose member key is not there yet: no address known for it, and the key is held.
    view = { ...EMPTY_CLUSTER, leader: leader('node2'), members: [member('node1', 'http://a:8008')] };
    await o.observe();
    expect(o.formerLeader).to.equal(null);
    view = { ...EMPTY_CLUSTER, members: [member('node1', 'http://a:8008')] };
    await o.observe();
    expect(o.formerLeader, 'node2 was never seen with an address').to.equal(null);
  });
});
