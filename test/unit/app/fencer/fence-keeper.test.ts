import { expect } from 'chai';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { FakeWatchdog } from '../../../../src/adapters/watchdog/fake-watchdog.js';
import { FenceKeeper } from '../../../../src/app/fencer/fence-keeper.js';

/** A keeper on fakes (`undo`: with the sync key undo of a promotion not finished). `holdStops`: a stop finishes when `ctl.finishStop` is called; `holdReads`: a read of the server answers when `ctl.answer` is. */
function keeper(opts: { stops?: boolean; holdStops?: boolean; holdReads?: boolean; undo?: boolean; mine?: boolean; holder?: () => string | null | undefined } = {}) {
  const clock = new FakeClock(1_000_000);
  const watchdog = new FakeWatchdog({ clock });
  const calls: string[] = [];
  const server = { primary: false };
  const ctl = { finishStop: (_ok: boolean): void => undefined, answer: (_primary: boolean): void => undefined, reads: 0 };
  const k = new FenceKeeper({
    primaryRunning: () => {
      ctl.reads++;
      return opts.holdReads ? new Promise<boolean>((r) => (ctl.answer = r)) : Promise.resolve(server.primary);
    },
    clock,
    logger: new MemoryLogger(),
    watchdog,
    safetyMarginMs: 5000,
    holdReadOnly: async () => {
      calls.push('hold');
    },
    stopDatabase: (mode) => {
      calls.push(`stop ${mode}`);
      return opts.holdStops ? new Promise<boolean>((r) => (ctl.finishStop = r)) : Promise.resolve(opts.stops ?? true);
    },
    releaseLeader: async () => {
      calls.push('release');
    },
    ...(opts.undo ? { undoPromotion: async () => void calls.push('undo') } : {}),
    ...(opts.mine !== undefined ? { leaderIsMine: async () => (calls.push('ask'), opts.mine!) } : {}),
    ...(opts.holder ? { member: 'node3', leaderHolder: async () => (calls.push('read key'), opts.holder!()) } : {}),
  });
  return { clock, watchdog, calls, k, server, ctl };
}

/** Lets the keeper's pending steps run (the hold is awaited before the stop begins). */
const settled = () => new Promise<void>((r) => setImmediate(r));

describe('FenceKeeper: when the fencer stops PostgreSQL', () => {
  it('a renewed lease is never fenced; one not renewed is fenced at the deadline minus the safety margin, without releasing the lock', async () => {
    const { clock, calls, k } = keeper({ undo: true });
    k.guard(20_000);
    for (let i = 0; i < 30; i++) {
      await clock.advance(1000);
      k.guard(20_000);
      await k.check();
    }
    expect(calls).to.deep.equal([]);
    await clock.advance(14_900);
    await k.check();
    expect(calls).to.deep.equal([]);
    await clock.advance(200);
    await k.check();
    // The sync key of a promotion the stopped server never finished is put back; the lock runs out by itself.
    expect(calls).to.deep.equal(['hold', 'stop immediate', 'undo']);
    expect(k.state).to.equal('fenced');
  });

  it('told to stop while it guards a lock no agent watches: stops the primary first (held read-only), keeping the lock for its expiry', async () => {
    const { clock, calls, k, server } = keeper();
    server.primary = true;
    k.guard(20_000);
    await clock.advance(4000);
    expect(k.remainingMs).to.equal(16_000);
    await k.stopGuarding('told to stop');
    expect(calls).to.deep.equal(['hold', 'stop immediate']);
    expect(k.state).to.equal('fenced');
    expect(k.remainingMs).to.equal(null);
    // Nothing guarded: nothing to stop.
    const idle = keeper();
    await idle.k.stopGuarding('told to stop');
    expect(idle.calls).to.deep.equal([]);
  });

  it('a lock handed over by an agent that stopped in maintenance mode is guarded without it; a server stopped by hand meanwhile gets no hold', async () => {
    const { clock, calls, k, server } = keeper();
    expect(k.handover(), 'nothing guarded: nothing to hand over').to.equal(false);
    k.guard(20_000);
    expect(k.handover()).to.equal(true);
    await clock.advance(14_900);
    await k.check();
    expect(calls).to.deep.equal([]);
    // The operator stopped PostgreSQL (before a pg_upgrade, say): no standby.signal is left in its way.
    server.primary = false;
    await clock.advance(200);
    await k.check();
    expect(calls).to.deep.equal(['stop immediate']);

    const running = keeper();
    running.k.guard(20_000);
    running.k.handover();
    running.server.primary = true;
    await running.clock.advance(15_100);
    await running.k.check();
    expect(running.calls).to.deep.equal(['hold', 'stop immediate']);

    // A new agent's deadline ends the handover: its lock is fenced the usual way.
    const adopted = keeper();
    adopted.k.guard(20_000);
    adopted.k.handover();
    adopted.k.guard(20_000);
    await adopted.clock.advance(15_100);
    await adopted.k.check();
    expect(adopted.calls).to.deep.equal(['hold', 'stop immediate']);
  });

  it('nothing guarded: nothing fenced, however long it waits', async () => {
    const { clock, calls, k } = keeper();
    k.guard(20_000);
    k.unguard();
    await clock.advance(60_000);
    await k.check();
    expect(calls).to.deep.equal([]);
  });

  it('the agent died holding the lock: stop at once (immediate), then release; without the lock: a fast stop, nothing released', async () => {
    const a = keeper({ undo: true });
    a.k.guard(20_000);
    await a.k.agentDied();
    expect(a.calls).to.deep.equal(['hold', 'stop immediate', 'undo', 'release']);
    const b = keeper({ undo: true });
    await b.k.agentDied();
    expect(b.calls).to.deep.equal(['stop fast']);
  });

  it('an agent that died as it took the lock, before it reported it: once the server is down, etcd says the lock is its, and it is released (undo first)', async () => {
    const a = keeper({ undo: true, mine: true });
    await a.k.agentDied();
    expect(a.calls).to.deep.equal(['stop fast', 'ask', 'undo', 'release']);
    const b = keeper({ undo: true, mine: false });
    await b.k.agentDied();
    expect(b.calls).to.deep.equal(['stop fast', 'ask']);
    // A reported lock needs no question.
    const c = keeper({ undo: true, mine: true });
    c.k.guard(20_000);
    await c.k.agentDied();
    expect(c.calls).to.deep.equal(['hold', 'stop immediate', 'undo', 'release']);
  });

  it('a fenced primary is left read-only (hold before the stop), lock or not; a replica is only stopped', async () => {
    const primaryNoLock = keeper();
    primaryNoLock.server.primary = true;
    await primaryNoLock.k.agentDied();
    expect(primaryNoLock.calls).to.deep.equal(['hold', 'stop fast']);
    const replica = keeper();
    await replica.k.agentDied();
    expect(replica.calls).to.deep.equal(['stop fast']);
  });

  it('a stop that fails releases nothing and stops kicking the device, so the machine resets before the lock moves on', async () => {
    const { clock, calls, watchdog, k } = keeper({ stops: false });
    await watchdog.activate(15);
    k.watchdogArmed(15);
    k.guard(20_000);
    await k.check();
    const kicks = watchdog.keepalives;
    await k.agentDied();
    expect(calls).to.deep.equal(['hold', 'stop immediate']);
    await clock.advance(1000);
    await k.check();
    expect(watchdog.keepalives).to.equal(kicks);
    expect(watchdog.isActive, 'still armed: it will fire').to.equal(true);
  });

  it('kicks the device while the lease is safe; disarms it after a successful fence and on a clean detach', async () => {
    const { clock, watchdog, k } = keeper();
    await watchdog.activate(15);
    k.watchdogArmed(15);
    k.guard(20_000);
    await k.check();
    expect(watchdog.keepalives).to.be.at.least(1);
    await clock.advance(16_000);
    await k.check();
    expect(watchdog.isActive).to.equal(false);
    await watchdog.activate(15);
    await k.detach();
    expect(watchdog.isActive).to.equal(false);
  });

  it('kicks only while the countdown of a kick ends within the lease: a fencer that cannot stop PostgreSQL has the machine reset by the lock\'s deadline, not a timeout after it', async () => {
    const { clock, watchdog, k } = keeper({ stops: false });
    await watchdog.activate(15);
    k.watchdogArmed(15);
    k.guard(20_000);
    await k.check();
    const first = watchdog.keepalives;
    expect(first).to.equal(1);
    await clock.advance(5000);
    await k.check();
    expect(watchdog.keepalives, 'the last kick whose countdown ends by the deadline').to.equal(2);
    await clock.advance(100);
    await k.check();
    expect(watchdog.keepalives, 'a kick now would reset the machine after the lock expired').to.equal(2);
    // The fence fires at the deadline minus the safety margin and fails: the device fires at the deadline at the latest.
    await clock.advance(9_900);
    await k.check();
    await clock.advance(4_999);
    expect(watchdog.hasFired).to.equal(false);
    await clock.advance(1);
    expect(watchdog.hasFired, 'reset at the lock deadline').to.equal(true);
  });

  it('a renewed lease keeps the device alive: each renewal lets the kicks go on', async () => {
    const { clock, watchdog, k } = keeper();
    await watchdog.activate(15);
    k.watchdogArmed(15);
    for (let i = 0; i < 60; i++) {
      k.guard(20_000);
      await k.check();
      await clock.advance(1000);
    }
    expect(watchdog.hasFired).to.equal(false);
    expect(watchdog.keepalives).to.equal(60);
  });

  it('a fence holds: a primary that comes back before the agent holds the lock again is stopped again; a replica may run; a new lock lifts it', async () => {
    const { clock, calls, k, server } = keeper();
    k.guard(20_000);
    await clock.advance(15_000);
    await k.check();
    expect(calls).to.deep.equal(['hold', 'stop immediate']);
    // The agent, thawed in the middle of a restart, finishes starting the server as a primary.
    server.primary = true;
    k.unguard();
    await k.check();
    expect(calls).to.deep.equal(['hold', 'stop immediate', 'hold', 'stop immediate']);
    server.primary = false;
    await k.check();
    expect(calls).to.have.length(4);
    // The agent takes the lock again: guarding as usual, a primary is fine.
    k.guard(20_000);
    server.primary = true;
    await k.check();
    expect(k.state).to.equal('guarding');
    expect(calls).to.have.length(4);
  });

  it('a lock reported while a fence runs is guarded once PostgreSQL is down: the primary its holder starts next is left running', async () => {
    const { clock, calls, k, server, ctl } = keeper({ holdStops: true });
    k.guard(20_000);
    await clock.advance(15_000);
    const fence = k.check();
    // The agent renews late (or a restarted agent takes the lock) while the stop is under way.
    k.guard(20_000);
    await settled();
    ctl.finishStop(true);
    await fence;
    expect(k.state).to.equal('guarding');
    server.primary = true;
    await clock.advance(1000);
    await k.check();
    expect(calls).to.deep.equal(['hold', 'stop immediate']);
    // That lock is guarded like any other: not renewed, it is fenced in its turn.
    await clock.advance(14_100);
    const second = k.check();
    await settled();
    ctl.finishStop(true);
    await second;
    expect(calls).to.deep.equal(['hold', 'stop immediate', 'hold', 'stop immediate']);
    expect(k.state).to.equal('fenced');
  });

  it('a check reading the server when a new lock arrives does not fence the primary started under that lock', async () => {
    const { clock, calls, k, ctl } = keeper({ holdReads: true });
    k.guard(20_000);
    await clock.advance(15_000);
    await k.check();
    expect(calls).to.deep.equal(['hold', 'stop immediate']);
    // Fenced, no lock: the next check reads the server; the agent takes the lock meanwhile and starts a primary.
    const check = k.check();
    expect(ctl.reads).to.equal(1);
    k.guard(20_000);
    ctl.answer(true);
    await check;
    expect(calls).to.deep.equal(['hold', 'stop immediate']);
    expect(k.state).to.equal('guarding');
  });

  it('an agent that died is fenced and its lock released, unless a restarted agent reported a lock of its own during the stop', async () => {
    const { calls, k, ctl } = keeper({ holdStops: true, undo: true });
    k.guard(20_000);
    const died = k.agentDied();
    k.guard(20_000);
    await settled();
    ctl.finishStop(true);
    await died;
    expect(calls).to.deep.equal(['hold', 'stop immediate']);
    expect(k.state).to.equal('guarding');
  });

  describe('the leader key lost before the deadline (a lease revoked early)', () => {
    it('stops the primary when the key stays gone for the grace while the agent does nothing, once a read agrees; the lock is not released', async () => {
      let holder: string | null | undefined = null;
      const { clock, calls, k } = keeper({ holder: () => holder, undo: true });
      k.guard(20_000);
      await clock.advance(1000);
      k.leaderKeyChanged(null);
      await clock.advance(400);
      await k.check();
      expect(calls, 'within the grace: the agent may take the key back').to.deep.equal([]);
      await clock.advance(100);
      await k.check();
      expect(calls).to.deep.equal(['read key', 'hold', 'stop immediate', 'undo']);
      expect(k.state).to.equal('fenced');
      holder = undefined;
    });

    it('does not when the agent takes its key back, steps down, or a read still shows the key this member\'s (a watch behind)', async () => {
      const back = keeper({ holder: () => 'node3' });
      back.k.guard(20_000);
      await back.clock.advance(1000);
      back.k.leaderKeyChanged(null);
      await back.clock.advance(100);
      back.k.leaderKeyChanged('node3');
      await back.clock.advance(1000);
      await back.k.check();
      expect(back.calls).to.deep.equal([]);

      const down = keeper({ holder: () => 'node2' });
      down.k.guard(20_000);
      await down.clock.advance(1000);
      down.k.leaderKeyChanged('node2');
      down.k.unguard();
      await down.clock.advance(1000);
      await down.k.check();
      expect(down.calls).to.deep.equal([]);

      const behind = keeper({ holder: () => 'node3' });
      behind.k.guard(20_000);
      await behind.clock.advance(1000);
      behind.k.leaderKeyChanged(null);
      await behind.clock.advance(600);
      await behind.k.check();
      await behind.clock.advance(600);
      await behind.k.check();
      expect(behind.calls, 'read once: the key is this member\'s after all').to.deep.equal(['read key']);
    });

    it('does not on a change seen before this lock began, after the watch reconnected, or when etcd cannot be read', async () => {
      const before = keeper({ holder: () => null });
      before.k.leaderKeyChanged(null);
      await before.clock.advance(10);
      before.k.guard(20_000);
      await before.clock.advance(2000);
      await before.k.check();
      expect(before.calls, 'the free key this agent then took').to.deep.equal([]);

      const resync = keeper({ holder: () => null });
      resync.k.guard(20_000);
      await resync.clock.advance(10);
      resync.k.leaderKeyChanged(null);
      resync.k.leaderKeyUnknown();
      await resync.clock.advance(2000);
      await resync.k.check();
      expect(resync.calls).to.deep.equal([]);

      const unreadable = keeper({ holder: () => undefined });
      unreadable.k.guard(20_000);
      await unreadable.clock.advance(10);
      unreadable.k.leaderKeyChanged('node2');
      await unreadable.clock.advance(2000);
      await unreadable.k.check();
      await unreadable.clock.advance(100);
      await unreadable.k.check();
      expect(unreadable.calls, 'the deadline still applies; asked again only after the grace').to.deep.equal(['read key']);
      await unreadable.clock.advance(400);
      await unreadable.k.check();
      expect(unreadable.calls).to.deep.equal(['read key', 'read key']);
    });
  });
});
