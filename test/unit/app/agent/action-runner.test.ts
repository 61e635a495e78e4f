import { expect } from 'chai';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { InMemoryClusterStore } from '../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import { FakeDatabase } from '../../../../src/adapters/database/fake-database.js';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { FakeWatchdog } from '../../../../src/adapters/watchdog/fake-watchdog.js';
import { ActionRunner } from '../../../../src/app/agent/action-runner.js';
import { AgentMemory } from '../../../../src/app/agent/agent-memory.js';
import { CommandInbox } from '../../../../src/app/agent/command-inbox.js';
import { LeaderLease } from '../../../../src/app/agent/leader-lease.js';
import { decision } from '../../../../src/domain/cluster/ha/decision.js';

describe('ActionRunner: rollbacks', () => {
  async function setup() {
    const clock = new FakeClock(Date.UTC(2024, 0, 1));
    const db = new FakeDatabase({ name: 'a', connUrl: 'postgres://a:5432/postgres', clock });
    const source = new FakeDatabase({ name: 'b', connUrl: 'postgres://b:5432/postgres', clock, network: db.network });
    await db.initdb();
    await source.initdb();
    await source.start({ upstream: null, timeoutMs: 1000 });
    const memory = new AgentMemory();
    const runner = new ActionRunner(
      { store: new InMemoryClusterStore(new InMemoryKeyValueSpace(clock), { clientId: 'a' }), db, watchdog: new FakeWatchdog(), clock, logger: new MemoryLogger() },
      { lease: new LeaderLease(), memory, inbox: new CommandInbox(() => undefined) },
    );
    return { runner, memory, db };
  }
  const rewindFrom = (connUrl: string) =>
    decision('rewind', [{ type: 'rewind', source: { name: 'x', connUrl } }], {
      rollback: { fromIndex: 0, untilIndex: 1, actions: [{ type: 'remember', patch: { rewindFailedOnTimeline: 1 } }], unless: ['rewind_source_unreachable'] },
    });

  it('a failure with a code in `unless` (a rewind whose source does not answer) runs no rollback; any other failure does', async () => {
    const { runner, memory, db } = await setup();
    const unreachable = await runner.runRange(rewindFrom('postgres://nobody:5432/postgres'), 0, 1, { me: 'a', ttlSeconds: 30 });
    expect(unreachable.completed).to.equal(false);
    expect(memory.memory.rewindFailedOnTimeline).to.equal(null);
    db.failNext('rewind');
    await runner.runRange(rewindFrom('postgres://b:5432/postgres'), 0, 1, { me: 'a', ttlSeconds: 30 });
    expect(memory.memory.rewindFailedOnTimeline).to.equal(1);
  });
});
