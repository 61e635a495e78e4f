import { expect } from 'chai';
import { EMPTY_CLUSTER, type Cluster, type StoredConfig } from '../../../../src/domain/cluster/model/cluster.js';
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
});
