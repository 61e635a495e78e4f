import { expect } from 'chai';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { InMemoryClusterStore } from '../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import { FakeDatabase } from '../../../../src/adapters/database/fake-database.js';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { NoopWatchdog } from '../../../../src/adapters/watchdog/noop-watchdog.js';
import { decision, type Action } from '../../../../src/domain/cluster/ha/decision.js';
import { ActionRunner } from '../../../../src/app/agent/action-runner.js';
import { AgentMemory } from '../../../../src/app/agent/agent-memory.js';
import { CommandInbox } from '../../../../src/app/agent/command-inbox.js';
import { LeaderLease } from '../../../../src/app/agent/leader-lease.js';

describe('ActionRunner: the switchover steps', () => {
  let clock: FakeClock;
  let db: FakeDatabase;
  let store: InMemoryClusterStore;
  let logger: MemoryLogger;
  const seen: string[] = [];

  beforeEach(async () => {
    seen.length = 0;
    clock = new FakeClock(Date.UTC(2024, 0, 1));
    db = new FakeDatabase({ name: 'node1', connUrl: 'postgres://node1:5432/postgres', clock });
    await db.initdb();
    await db.start({ upstream: null, timeoutMs: 10_000 });
    store = new InMemoryClusterStore(new InMemoryKeyValueSpace(clock), { clientId: 'node1' });
    logger = new MemoryLogger();
  });

  function runner(): ActionRunner {
    const state = { lease: new LeaderLease(), memory: new AgentMemory(), inbox: new CommandInbox(() => {}) };
    return new ActionRunner({ store, db, watchdog: new NoopWatchdog(), clock, logger }, state, async () => {
      seen.push(`probe: ${db.isRunning ? 'running' : 'stopped'}`);
    });
  }

  const run = (actions: Action[]) => runner().runRange(decision('test', actions, { job: 'demote' }), 0, actions.length, { me: 'node1', ttlSeconds: 30 }, (a) => seen.push(a.type));

  it('the state after a stop is taken before the next action (the key is released only then); no probe after a checkpoint', async () => {
    expect(await store.acquireLeader('node1', 30)).to.not.equal(null);
    const out = await run([{ type: 'checkpoint' }, { type: 'stop', mode: 'fast', untilShutdownCheckpoint: true }, { type: 'writeFinalPosition' }, { type: 'releaseLeader' }]);
    expect(out.completed).to.equal(true);
    expect(seen).to.deep.equal(['checkpoint', 'stop', 'probe: stopped', 'writeFinalPosition', 'releaseLeader']);
  });

  it("writeFinalPosition puts the shutdown checkpoint's position in the status key; without a clean shutdown it writes nothing and the sequence goes on", async () => {
    const last = await db.write();
    const out = await run([{ type: 'stop', mode: 'fast' }, { type: 'writeFinalPosition' }]);
    expect(out.completed).to.equal(true);
    expect((await store.read()).status?.optime).to.equal(last);
    await db.start({ upstream: null, timeoutMs: 10_000 });
    await db.write();
    const again = await run([{ type: 'stop', mode: 'immediate' }, { type: 'writeFinalPosition' }, { type: 'remember', patch: {} }]);
    expect(again.completed).to.equal(true);
    expect((await store.read()).status?.optime).to.equal(last);
    expect(logger.messages('warn').join('\n')).to.match(/did not shut down cleanly/);
  });
});
