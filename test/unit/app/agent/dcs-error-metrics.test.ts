import { expect } from 'chai';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { InMemoryClusterStore } from '../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import { FakeDatabase } from '../../../../src/adapters/database/fake-database.js';
import { NullLogger } from '../../../../src/adapters/logger/null-logger.js';
import { DCS_OPERATIONS } from '../../../../src/adapters/metrics/dcs-operations.js';
import { FakeWatchdog } from '../../../../src/adapters/watchdog/fake-watchdog.js';
import { ActionRunner, type RunContext } from '../../../../src/app/agent/action-runner.js';
import { AgentMemory } from '../../../../src/app/agent/agent-memory.js';
import { CommandInbox } from '../../../../src/app/agent/command-inbox.js';
import { HaLoop } from '../../../../src/app/agent/ha-loop.js';
import { LeaderLease } from '../../../../src/app/agent/leader-lease.js';
import { fixedSettings } from '../../../../src/app/agent/tokens.js';
import { decision, type Action } from '../../../../src/domain/cluster/ha/decision.js';
import type { AgentMetricsSink } from '../../../../src/ports/agent-metrics.js';

/** A sink that records the DCS errors it hears, in order. */
class RecordingSink implements AgentMetricsSink {
  readonly dcsErrors: string[] = [];
  loopCompleted(): void {}
  dcsError(operation: string): void {
    this.dcsErrors.push(operation);
  }
  leaderChanged(): void {}
  operationDuration(): void {}
  operationRefused(): void {}
  callbackFailed(): void {}
}

const CTX: RunContext = { me: 'a', ttlSeconds: 30 };

async function runnerSetup() {
  const clock = new FakeClock(Date.UTC(2024, 0, 1));
  const space = new InMemoryKeyValueSpace(clock);
  const store = new InMemoryClusterStore(space, { clientId: 'a' });
  const db = new FakeDatabase({ name: 'a', connUrl: 'postgres://a:5432/postgres', clock });
  const metrics = new RecordingSink();
  const lease = new LeaderLease();
  const runner = new ActionRunner({ store, db, watchdog: new FakeWatchdog(), clock, logger: new NullLogger(), metrics }, { lease, memory: new AgentMemory(), inbox: new CommandInbox(() => undefined) });
  const run = (a: Action, ctx: RunContext = CTX) => runner.runRange(decision(a.type, [a]), 0, 1, ctx);
  return { clock, space, store, db, metrics, lease, runner, run };
}

describe('svc_dcs_errors_total: every DCS call of the HA loop that fails is counted', () => {
  it('each store action counts its own operation when the store does not answer, once, and fails as before', async () => {
    const { store, db, metrics, lease, clock, run } = await runnerSetup();
    await db.initdb();
    lease.granted(clock.now() + 30_000);
    store.setReachable(false);
    const cases: [Action, string][] = [
      [{ type: 'acquireLeader' }, 'acquire_leader'],
      [{ type: 'releaseLeader' }, 'release_leader'],
      [{ type: 'createInitialize', value: '' }, 'claim_initialize'],
      [{ type: 'createInitialize', value: '7000000000000000001', replacing: '5' }, 'replace_initialize'],
      [{ type: 'deleteInitialize', revision: null }, 'abandon_initialize'],
      [{ type: 'writeConfig', value: { ttl: 30 } }, 'write_config'],
      [{ type: 'recordPromotion', previous: [], timeline: 2, lsn: 100, at: '2024-01-01T00:00:00Z', leader: 'a', maxLines: 0 }, 'write_history'],
      [{ type: 'writeStatus', optime: 1, slots: {} }, 'write_status'],
      [{ type: 'writeSync', leader: 'a', syncStandby: ['b'], quorum: 1, ifRevision: '0' } as Action, 'write_sync'],
      [{ type: 'deleteSync' }, 'clear_sync'],
      [{ type: 'writeFailsafe', members: { a: 'http://a:8008' } }, 'write_failsafe'],
      [{ type: 'clearFailover', revision: '3', reason: 'done' }, 'write_failover'],
    ];
    for (const [action, operation] of cases) {
      const before = metrics.dcsErrors.length;
      const out = await run(action);
      expect(out.completed, action.type).to.equal(false);
      expect((out.error as { code?: string }).code, action.type).to.equal('dcs_unavailable');
      expect(metrics.dcsErrors.slice(before), action.type).to.deep.equal([operation]);
    }
    // The initialize key's completion: under the lock, with the system identifier the server reports.
    lease.granted(clock.now() + 30_000);
    const before = metrics.dcsErrors.length;
    expect((await run({ type: 'writeInitialize' })).completed).to.equal(false);
    expect(metrics.dcsErrors.slice(before)).to.deep.equal(['complete_initialize']);
    for (const op of new Set(metrics.dcsErrors)) expect(DCS_OPERATIONS as readonly string[]).to.include(op);
  });

  it('the final position a stopping primary writes is best effort: its failure is counted, the action still succeeds', async () => {
    const { store, db, metrics, run } = await runnerSetup();
    await db.initdb();
    await db.start({ upstream: null, timeoutMs: 1000 });
    await db.stop('fast', 1000);
    store.setReachable(false);
    expect((await run({ type: 'writeFinalPosition' })).completed).to.equal(true);
    expect(metrics.dcsErrors).to.deep.equal(['write_status']);
  });

  it('a renewal that fails counts once, whether sent at the tick\'s start or by refreshLeader', async () => {
    const { store, metrics, lease, clock, runner, run } = await runnerSetup();
    expect((await run({ type: 'acquireLeader' })).completed).to.equal(true);
    store.setReachable(false);
    const early = await runner.renew(CTX);
    expect(early.outcome).to.equal('failed');
    // The tick's refreshLeader takes the early renewal's outcome: the same failure, not a second one.
    expect((await run({ type: 'refreshLeader' }, { ...CTX, renewed: early })).completed).to.equal(false);
    expect(metrics.dcsErrors).to.deep.equal(['renew_leader']);
    // Without an early renewal, refreshLeader renews itself.
    expect((await run({ type: 'refreshLeader' })).completed).to.equal(false);
    expect(metrics.dcsErrors).to.deep.equal(['renew_leader', 'renew_leader']);
    expect(lease.renewalFailingSince).to.equal(clock.now());
  });

  it('a lost compare-and-set (another member holds the lock, the key changed) is an answer, not an error', async () => {
    const { space, metrics, lease, clock, runner, run } = await runnerSetup();
    const other = new InMemoryClusterStore(space, { clientId: 'b' });
    expect(await other.acquireLeader('b', 30)).to.not.equal(null);
    expect(await other.claimInitialize('')).to.equal(true);
    const acquired = await run({ type: 'acquireLeader' });
    expect(acquired.completed).to.equal(false);
    expect((acquired.error as { code?: string }).code).to.equal('condition_failed');
    expect((await run({ type: 'createInitialize', value: '' })).completed).to.equal(false);
    lease.granted(clock.now() + 30_000);
    expect((await runner.renew(CTX)).outcome).to.equal('lost');
    expect((await run({ type: 'refreshLeader' })).completed).to.equal(false);
    expect(await other.writeSync({ leader: 'b', syncStandby: [], quorum: 0 }, null)).to.equal(true);
    expect((await run({ type: 'writeSync', leader: 'a', syncStandby: [], quorum: 0, ifRevision: '0' } as Action)).completed).to.equal(false);
    expect(metrics.dcsErrors).to.deep.equal([]);
  });

  it('a failure of the database inside a DCS action is not a DCS error', async () => {
    const { db, metrics, lease, clock, run } = await runnerSetup();
    await db.initdb();
    lease.granted(clock.now() + 30_000);
    db.failNext('probe');
    expect((await run({ type: 'writeInitialize' })).completed).to.equal(false);
    expect(metrics.dcsErrors).to.deep.equal([]);
  });
});

describe('svc_dcs_errors_total: the HA loop\'s read and member key', () => {
  async function loopSetup(wrap: (store: InMemoryClusterStore) => InMemoryClusterStore = (s) => s) {
    const clock = new FakeClock();
    const store = new InMemoryClusterStore(new InMemoryKeyValueSpace(clock), { clientId: 'node1' });
    const db = new FakeDatabase({ name: 'node1', connUrl: 'postgres://10.0.0.1:5432/postgres', clock });
    const metrics = new RecordingSink();
    const loop = new HaLoop(
      wrap(store),
      db,
      clock,
      new FakeWatchdog(),
      new NullLogger(),
      { fetchStatus: async () => null, postFailsafe: async () => false, fetchEvents: async () => [] },
      fixedSettings({
        node: { scope: 'demo', name: 'node1', apiUrl: 'http://10.0.0.1:8008', connUrl: 'postgres://10.0.0.1:5432/postgres', tags: {}, watchdogMode: 'off', svcVersion: '0.1.0' },
        local: { bootstrapDcs: { ttl: 30, loop_wait: 10 }, parameters: {}, watchdogSafetyMargin: 5 },
      }),
      { snapshotRefreshMs: 60_000 },
      metrics,
    );
    for (let i = 0; i < 5 && loop.snapshot().status.role !== 'primary'; i++) {
      await loop.tickOnce();
      await loop.jobDone();
    }
    expect(loop.snapshot().status.role).to.equal('primary');
    return { clock, store, loop, metrics };
  }

  it('a primary cut off the DCS counts the failed read and the failed renewal of its lock', async () => {
    const { clock, store, loop, metrics } = await loopSetup();
    // A tick as the leader with the lock: the next one renews the lock at its start, beside the read.
    await clock.advance(10_000);
    expect((await loop.tickOnce()).actions.map((a) => a.type)).to.include('refreshLeader');
    expect(metrics.dcsErrors).to.deep.equal([]);
    store.setReachable(false);
    await clock.advance(10_000);
    await loop.tickOnce();
    // The member key is not written while the read fails: no publish_member error.
    expect(metrics.dcsErrors).to.have.members(['renew_leader', 'read']);
    await clock.advance(10_000);
    await loop.tickOnce();
    expect(metrics.dcsErrors).to.have.members(['renew_leader', 'read', 'read']);
  });

  it('a member key the store will not take counts publish_member', async () => {
    let failPublish = false;
    const { clock, loop, metrics } = await loopSetup(
      (s) =>
        new Proxy(s, {
          get(target, prop, receiver) {
            if (prop === 'publishMember' && failPublish) return async () => Promise.reject(new Error('etcd: request is too large'));
            const v = Reflect.get(target, prop, receiver) as unknown;
            return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(target) : v;
          },
        }),
    );
    failPublish = true;
    await clock.advance(10_000);
    await loop.tickOnce();
    expect(metrics.dcsErrors).to.deep.equal(['publish_member']);
  });
});
