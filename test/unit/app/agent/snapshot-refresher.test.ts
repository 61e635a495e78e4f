import { expect } from 'chai';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { InMemoryClusterStore } from '../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import { FakeDatabase } from '../../../../src/adapters/database/fake-database.js';
import { NullLogger } from '../../../../src/adapters/logger/null-logger.js';
import { FakeWatchdog } from '../../../../src/adapters/watchdog/fake-watchdog.js';
import { HaLoop } from '../../../../src/app/agent/ha-loop.js';
import { fixedSettings } from '../../../../src/app/agent/tokens.js';

describe('HaLoop: the snapshot stays fresh between ticks', () => {
  it('WAL positions on /node are at most one refresh interval old, with loop_wait 10', async () => {
    const clock = new FakeClock();
    const db = new FakeDatabase({ name: 'node1', connUrl: 'postgres://10.0.0.1:5432/postgres', clock });
    const loop = new HaLoop(
      new InMemoryClusterStore(new InMemoryKeyValueSpace(clock), { clientId: 'node1' }),
      db,
      clock,
      new FakeWatchdog(),
      new NullLogger(),
      { fetchStatus: async () => null, postFailsafe: async () => false, fetchEvents: async () => [] },
      fixedSettings({
        node: { scope: 'demo', name: 'node1', apiUrl: 'http://10.0.0.1:8008', connUrl: 'postgres://10.0.0.1:5432/postgres', tags: {}, watchdogMode: 'off', svcVersion: '0.1.0' },
        local: { bootstrapDcs: { ttl: 30, loop_wait: 10 }, parameters: {}, watchdogSafetyMargin: 5 },
      }),
      { snapshotRefreshMs: 1000 },
    );
    for (let i = 0; i < 5 && loop.snapshot().status.role !== 'primary'; i++) {
      await loop.tickOnce();
      await loop.jobDone();
    }
    loop.start();
    try {
      await clock.advance(100);
      const position = () => {
        const x = loop.snapshot().status.xlog;
        return x && 'location' in x ? x.location : null;
      };
      const before = position();
      const ticks = loop.snapshot().lastLoopAt;
      await db.write(4096);
      await clock.advance(1_100);
      expect(position()).to.be.greaterThan(before!);
      expect(loop.snapshot().lastLoopAt, 'no tick ran').to.equal(ticks);
    } finally {
      await loop.stop({ stopDatabase: false, releaseLeader: false });
    }
  });
});
