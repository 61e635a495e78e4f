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
import { bootstrapRollback } from '../../../../src/domain/cluster/ha/bootstrap-leftovers.js';
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

  it('a bootstrap whose build refused the data directory (it holds a database) is undone without removing that directory', async () => {
    const { runner, db } = await setup();
    const actions = [{ type: 'createInitialize', value: '' }, { type: 'initdb' }, { type: 'acquireLeader' }, { type: 'start', upstream: null, standby: false, timeoutMs: 1000 }] as const;
    const bootstrap = decision('bootstrapping a new cluster', [...actions], { job: 'bootstrap', rollback: bootstrapRollback([...actions]) });
    const outcome = await runner.runRange(bootstrap, 0, actions.length, { me: 'a', ttlSeconds: 30 });
    expect(outcome.completed).to.equal(false);
    expect((outcome.error as { code?: string }).code).to.equal('data_dir_not_empty');
    expect((await db.probe()).initialized, 'the database it refused is still there').to.equal(true);
    // A build that failed on its own (it made the directory) is removed as before.
    await db.removeDataDirectory();
    db.failNext('initdb');
    await runner.runRange(bootstrap, 0, actions.length, { me: 'a', ttlSeconds: 30 });
    expect((await db.probe()).initialized).to.equal(false);
  });

  it("a failed bootstrap drops its own claim on the initialize key, never the claim another member made since", async () => {
    const clock = new FakeClock(Date.UTC(2024, 0, 1));
    const space = new InMemoryKeyValueSpace(clock);
    const store = new InMemoryClusterStore(space, { clientId: 'a' });
    const other = new InMemoryClusterStore(space, { clientId: 'b' });
    const db = new FakeDatabase({ name: 'a', connUrl: 'postgres://a:5432/postgres', clock });
    const runner = new ActionRunner({ store, db, watchdog: new FakeWatchdog(), clock, logger: new MemoryLogger() }, { lease: new LeaderLease(), memory: new AgentMemory(), inbox: new CommandInbox(() => undefined) });
    const actions = [{ type: 'createInitialize', value: '' }, { type: 'initdb' }, { type: 'acquireLeader' }, { type: 'start', upstream: null, standby: false, timeoutMs: 1000 }] as const;
    const ctx = { me: 'a', ttlSeconds: 30 };
    const bootstrap = () => decision('bootstrapping a new cluster', [...actions], { job: 'bootstrap', rollback: bootstrapRollback([...actions]) });
    // Its own claim goes with it.
    db.failNext('initdb');
    expect((await runner.runRange(bootstrap(), 0, actions.length, ctx)).completed).to.equal(false);
    expect((await other.read()).initialize).to.equal(null);
    // The claim is made in the tick, the build runs as a job: meanwhile the claim was dropped as abandoned and another member claimed.
    const mine = bootstrap();
    expect((await runner.runRange(mine, 0, 1, ctx)).completed).to.equal(true);
    expect(await other.abandonInitialize((await other.read()).initializeRevision!)).to.equal(true);
    const theirs = await other.claimInitialize();
    db.failNext('initdb');
    expect((await runner.runRange(mine, 1, actions.length, ctx)).completed).to.equal(false);
    const after = await other.read();
    expect(after.initialize, "the other member's bootstrap keeps its claim").to.equal('');
    expect(after.initializeRevision).to.equal(theirs);
  });
});

describe('ActionRunner: a server becomes writable only under a lock held at that moment', () => {
  async function setup() {
    const clock = new FakeClock(Date.UTC(2024, 0, 1));
    const db = new FakeDatabase({ name: 'a', connUrl: 'postgres://a:5432/postgres', clock });
    await db.initdb();
    const lease = new LeaderLease();
    const memory = new AgentMemory();
    const runner = new ActionRunner(
      { store: new InMemoryClusterStore(new InMemoryKeyValueSpace(clock), { clientId: 'a' }), db, watchdog: new FakeWatchdog(), clock, logger: new MemoryLogger() },
      { lease, memory, inbox: new CommandInbox(() => undefined) },
    );
    return { runner, db, lease, clock, memory };
  }
  const restartPrimary = decision('starting the primary again after a crash (holding the leader key)', [
    { type: 'refreshLeader' },
    { type: 'start', upstream: null, standby: false, timeoutMs: 1000 },
  ]);

  it('a renewal answered before the agent stalled past the lock\'s end does not let the tick start its server as primary', async () => {
    const { runner, db, lease, clock } = await setup();
    lease.granted(clock.now() + 20_000);
    // The tick's early renewal was answered, then the agent stalled for longer than the lock lasts.
    await clock.advance(30_000);
    const out = await runner.runRange(restartPrimary, 0, 2, { me: 'a', ttlSeconds: 20, renewed: { outcome: 'renewed' } });
    expect(out.completed).to.equal(false);
    expect(out.stoppedAt).to.equal(0);
    expect(String((out.error as Error).message)).to.match(/refreshLeader: the leader lock ran out before this could run/);
    expect(lease.lost).to.equal(true);
    expect(db.isRunning).to.equal(false);
  });

  it('a promotion or a start as primary after the lock ran out is refused; a start as a replica is not', async () => {
    const { runner, db, clock } = await setup();
    const start = await runner.runRange(decision('start', [{ type: 'start', upstream: null, standby: false, timeoutMs: 1000 }]), 0, 1, { me: 'a', ttlSeconds: 20 });
    expect(String((start.error as Error).message)).to.match(/^start: the leader lock ran out/);
    expect(db.isRunning).to.equal(false);
    const replica = await runner.runRange(decision('start', [{ type: 'start', upstream: null, standby: true, timeoutMs: 1000 }]), 0, 1, { me: 'a', ttlSeconds: 20 });
    expect(replica.completed).to.equal(true);
    await clock.advance(100);
    const promote = await runner.runRange(decision('promote', [{ type: 'promote', timeoutMs: 1000 }]), 0, 1, { me: 'a', ttlSeconds: 20 });
    expect(String((promote.error as Error).message)).to.match(/^promote: the leader lock ran out/);
    expect(db.isWritable).to.equal(false);
  });

  it('a primary\'s restart after the lock ran out is refused; a replica\'s is not', async () => {
    const { runner, db, memory } = await setup();
    await db.start({ upstream: null, standby: true, timeoutMs: 1000 });
    const restart = decision('restart', [{ type: 'restart', timeoutMs: 1000 }]);
    expect((await runner.runRange(restart, 0, 1, { me: 'a', ttlSeconds: 20 })).completed, 'a replica').to.equal(true);
    memory.remember({ lastRole: 'primary' });
    const refused = await runner.runRange(restart, 0, 1, { me: 'a', ttlSeconds: 20 });
    expect(String((refused.error as Error).message)).to.match(/^restart: the leader lock ran out/);
  });
});

describe('ActionRunner: a failure that repeats loop after loop', () => {
  it('says why once (reminded at the 4th time, or when the error changes), and once when the action works again', async () => {
    const clock = new FakeClock(Date.UTC(2024, 0, 1));
    const db = new FakeDatabase({ name: 'a', connUrl: 'postgres://a:5432/postgres', clock });
    const store = new InMemoryClusterStore(new InMemoryKeyValueSpace(clock), { clientId: 'a' });
    const logger = new MemoryLogger();
    const runner = new ActionRunner({ store, db, watchdog: new FakeWatchdog(), clock, logger }, { lease: new LeaderLease(), memory: new AgentMemory(), inbox: new CommandInbox(() => undefined) });
    const status = decision('status', [{ type: 'writeStatus', optime: 1, slots: {} }]);
    store.setReachable(false);
    for (let i = 0; i < 5; i++) {
      await runner.runRange(status, 0, 1, { me: 'a', ttlSeconds: 30 });
      await clock.advance(2000);
    }
    expect(logger.messages('warn').filter((m) => m.startsWith('writeStatus did not succeed'))).to.have.length(2);
    store.setReachable(true);
    expect((await runner.runRange(status, 0, 1, { me: 'a', ttlSeconds: 30 })).completed).to.equal(true);
    expect(logger.messages('info').filter((m) => m.startsWith('writeStatus succeeds again (it failed 5 times in a row'))).to.have.length(1);
  });
});
