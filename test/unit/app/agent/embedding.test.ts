// The example of docs/embedding.md, kept runnable: the HA core over fake adapters, no HTTP.
import 'reflect-metadata';
import { expect } from 'chai';
import { Container } from 'inversify';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { FakeDatabase } from '../../../../src/adapters/database/fake-database.js';
import { InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import { InMemoryClusterStore } from '../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { FakeWatchdog } from '../../../../src/adapters/watchdog/fake-watchdog.js';
import { HaLoop } from '../../../../src/app/agent/ha-loop.js';
import { AgentSettingsSource, fixedSettings } from '../../../../src/app/agent/tokens.js';
import { Clock } from '../../../../src/ports/clock.js';
import { Database } from '../../../../src/ports/database.js';
import { ClusterStore } from '../../../../src/ports/cluster-store.js';
import { Logger } from '../../../../src/ports/logger.js';
import { PeerApi } from '../../../../src/ports/peer-api.js';
import { Watchdog } from '../../../../src/ports/watchdog.js';

describe('embedding: the HA core built with fake adapters (docs/embedding.md)', () => {
  it('a single node bootstraps, becomes primary and takes the leader key, without any HTTP', async () => {
    const clock = new FakeClock();
    const store = new InMemoryKeyValueSpace(clock);
    const container = new Container({ defaultScope: 'Singleton' });
    container.bind(Clock).toConstantValue(clock);
    container.bind(ClusterStore).toConstantValue(new InMemoryClusterStore(store, { clientId: 'node1' }));
    container.bind(Database).toConstantValue(new FakeDatabase({ name: 'node1', connUrl: 'postgres://10.0.0.1:5432/postgres', clock }));
    container.bind(Watchdog).toConstantValue(new FakeWatchdog());
    container.bind(Logger).toConstantValue(new MemoryLogger());
    container.bind(PeerApi).toConstantValue({ fetchStatus: async () => null, postFailsafe: async () => false });
    container.bind(AgentSettingsSource).toConstantValue(
      fixedSettings({
        node: {
          scope: 'demo',
          name: 'node1',
          apiUrl: 'http://10.0.0.1:8008',
          connUrl: 'postgres://10.0.0.1:5432/postgres',
          tags: {},
          watchdogMode: 'off',
          svcVersion: '0.1.0',
        },
        local: { bootstrapDcs: { ttl: 30, loop_wait: 10 }, parameters: {}, watchdogSafetyMargin: 5 },
      }),
    );
    container.bind(HaLoop).toSelf();
    const loop = container.get(HaLoop);

    // Drive ticks by hand: each one reads the DCS, probes the database, decides and acts.
    for (let i = 0; i < 5 && loop.snapshot().status.role !== 'primary'; i++) {
      await loop.tickOnce();
      await loop.jobDone();
      await clock.advance(1000);
    }

    expect(loop.snapshot().status.role).to.equal('primary');
    expect(loop.snapshot().status.state).to.equal('running');
    expect(store.peek('leader')?.value).to.equal('node1');
  });
});
