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
import type { ClusterStore } from '../../../../src/ports/cluster-store.js';
import { COMMAND_DCS_OPERATIONS, DcsErrorCountingStore } from '../../../../src/app/agent/dcs-error-counting-store.js';
import { DcsUnavailableError } from '../../../../src/domain/errors.js';
import type { CommandDeps } from '../../../../src/usecases/command-deps.js';
import { switchover } from '../../../../src/usecases/switchover.js';
import { cancelScheduledSwitchover } from '../../../../src/usecases/cancel-switchover.js';
import { setPause } from '../../../../src/usecases/pause.js';

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
      [{ type: 'deleteInitialize', revision: '5' }, 'abandon_initialize'],
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
    expect(await other.claimInitialize('')).to.be.a('string');
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

/** `store` with the calls named in `failing` rejected as a DCS that does not answer (the others go through). */
function failingCalls<S extends object>(store: S, failing: ReadonlySet<string>): S {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && failing.has(prop)) return async () => Promise.reject(new DcsUnavailableError(`${prop}: no answer`));
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(target) : v;
    },
  });
}

describe('svc_dcs_errors_total: DCS calls outside the HA loop, counted by what they attempted', () => {
  function storeSetup() {
    const clock = new FakeClock(Date.UTC(2024, 0, 1));
    const space = new InMemoryKeyValueSpace(clock);
    const store = new InMemoryClusterStore(space, { clientId: 'a' });
    const metrics = new RecordingSink();
    return { clock, space, store, metrics };
  }

  it('the commands\' store: reads, requests, cancellations and configuration changes, each under its own operation', async () => {
    const { store, metrics } = storeSetup();
    const counted = new DcsErrorCountingStore(store, metrics, COMMAND_DCS_OPERATIONS);
    store.setReachable(false);
    const calls: [() => Promise<unknown>, string][] = [
      [() => counted.read(), 'api_read'],
      [() => counted.read({ maxAgeMs: 1000 }), 'api_read'],
      [() => counted.writeFailover({ leader: 'a', member: 'b', scheduledAt: null }, null), 'request_switchover'],
      [() => counted.writeFailover({ leader: 'a', member: null, scheduledAt: '2030-01-01T00:00:00Z' }, null), 'request_switchover'],
      [() => counted.writeFailover({ leader: null, member: 'b', scheduledAt: null }, null), 'request_failover'],
      [() => counted.writeFailover(null, '7'), 'cancel_switchover'],
      [() => counted.writeConfig({ pause: true }, '3'), 'change_config'],
    ];
    for (const [call, operation] of calls) {
      const before = metrics.dcsErrors.length;
      const error = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, operation).to.be.instanceOf(DcsUnavailableError);
      expect(metrics.dcsErrors.slice(before), operation).to.deep.equal([operation]);
    }
    // A call the commands do not make is passed on, failure and all, uncounted.
    const before = metrics.dcsErrors.length;
    expect(await counted.writeStatus({ optime: 1, slots: {} }).catch((e: unknown) => e)).to.be.instanceOf(DcsUnavailableError);
    expect(metrics.dcsErrors.length).to.equal(before);
    for (const op of metrics.dcsErrors) expect(DCS_OPERATIONS as readonly string[]).to.include(op);
  });

  it('answers pass through; a lost compare-and-set is an answer, not an error', async () => {
    const { store, metrics } = storeSetup();
    const counted = new DcsErrorCountingStore(store, metrics, COMMAND_DCS_OPERATIONS);
    expect(await counted.writeConfig({ ttl: 30 }, null)).to.equal(true);
    const cluster = await counted.read();
    expect(cluster.config?.value).to.deep.equal({ ttl: 30 });
    expect(counted.lastRead()?.cluster).to.equal(cluster);
    expect(await counted.writeConfig({ ttl: 20 }, 'not-the-revision')).to.equal(false);
    expect(await counted.writeFailover({ leader: 'a', member: 'b', scheduledAt: null }, null)).to.equal(true);
    expect(await counted.writeFailover({ leader: 'a', member: 'b', scheduledAt: null }, null)).to.equal(false);
    expect(metrics.dcsErrors).to.deep.equal([]);
  });

  it('a switchover whose request cannot be written counts request_switchover, and one that cannot read counts api_read', async () => {
    const { clock, space, store, metrics } = storeSetup();
    const others = new InMemoryClusterStore(space, { clientId: 'others' });
    await others.writeConfig({ ttl: 30, loop_wait: 10 }, null);
    await others.acquireLeader('a', 30);
    const deps = (s: ClusterStore): CommandDeps => ({
      store: new DcsErrorCountingStore(s, metrics, COMMAND_DCS_OPERATIONS),
      clock,
      logger: new NullLogger(),
      peers: { fetchStatus: async () => null, postFailsafe: async () => false, fetchEvents: async () => [] },
      agent: null,
    });
    const at = new Date(clock.now() + 3_600_000).toISOString();
    const request = { leader: 'a', candidate: 'b', scheduledAt: at };
    expect((await switchover(deps(failingCalls(store, new Set(['writeFailover']))), request).catch((e: unknown) => e)) as Error).to.be.instanceOf(DcsUnavailableError);
    expect(metrics.dcsErrors).to.deep.equal(['request_switchover']);
    store.setReachable(false);
    expect(((await switchover(deps(store), request).catch((e: unknown) => e)) as { code?: string }).code).to.equal('dcs_unavailable');
    expect(await cancelScheduledSwitchover(deps(store)).catch((e: unknown) => (e as { code?: string }).code)).to.equal('dcs_unavailable');
    expect(await setPause(deps(store), true).catch((e: unknown) => (e as { code?: string }).code)).to.equal('dcs_unavailable');
    // Each of them failed at its first read, before writing anything.
    expect(metrics.dcsErrors).to.deep.equal(['request_switchover', 'api_read', 'api_read', 'api_read']);
    store.setReachable(true);
    expect(await setPause(deps(failingCalls(store, new Set(['writeConfig']))), true).catch((e: unknown) => (e as { code?: string }).code)).to.equal('dcs_unavailable');
    expect(await cancelScheduledSwitchover(deps(failingCalls(store, new Set(['writeFailover'])))).catch((e: unknown) => (e as { code?: string }).code)).to.equal('not_scheduled');
    expect(metrics.dcsErrors.slice(4)).to.deep.equal(['change_config']);
  });
});

describe('svc_dcs_errors_total: the agent\'s shutdown', () => {
  async function primary(failing: ReadonlySet<string>) {
    const clock = new FakeClock();
    const store = new InMemoryClusterStore(new InMemoryKeyValueSpace(clock), { clientId: 'node1' });
    const db = new FakeDatabase({ name: 'node1', connUrl: 'postgres://10.0.0.1:5432/postgres', clock });
    const metrics = new RecordingSink();
    let failNow = false;
    const calls = new Proxy(store, {
      get(target, prop, receiver) {
        if (failNow && typeof prop === 'string' && failing.has(prop)) return async () => Promise.reject(new DcsUnavailableError(`${prop}: no answer`));
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === 'function' ? (v as (...args: unknown[]) => unknown).bind(target) : v;
      },
    });
    const loop = new HaLoop(
      calls,
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
    expect(loop.lockHeldUntil()).to.not.equal(null);
    return { clock, store, db, loop, metrics, fail: () => (failNow = true) };
  }

  it('a leader key that cannot be released counts shutdown_release_leader; the shutdown goes on', async () => {
    const { loop, metrics, db, fail } = await primary(new Set(['releaseLeader']));
    fail();
    expect(await loop.stop()).to.equal('stopped');
    expect((await db.probe()).running).to.equal(false);
    expect(metrics.dcsErrors).to.deep.equal(['shutdown_release_leader']);
  });

  it('a member key that cannot be marked stopped counts shutdown_publish_member; one that cannot be dropped, shutdown_leave', async () => {
    const stopped = await primary(new Set(['publishMember']));
    stopped.fail();
    await stopped.loop.stop();
    expect(stopped.metrics.dcsErrors).to.deep.equal(['shutdown_publish_member']);
    expect((await stopped.store.read()).leader).to.equal(null);
    const left = await primary(new Set(['leave']));
    left.fail();
    await left.loop.stop({ stopDatabase: false });
    expect(left.metrics.dcsErrors).to.deep.equal(['shutdown_leave']);
  });

  it('a paused primary whose lock cannot be renewed for the handover counts shutdown_renew_leader, and is stopped', async () => {
    const { clock, store, loop, metrics, db, fail } = await primary(new Set(['renewLeader']));
    const config = (await store.read()).config!;
    expect(await store.writeConfig({ ...config.value, pause: true }, config.revision)).to.equal(true);
    await clock.advance(10_000);
    await loop.tickOnce();
    fail();
    expect(await loop.stop({ leaveRunningInPause: true })).to.equal('stopped');
    expect((await db.probe()).running).to.equal(false);
    expect(metrics.dcsErrors).to.deep.equal(['shutdown_renew_leader']);
  });
});
