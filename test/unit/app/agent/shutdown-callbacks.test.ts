import { expect } from 'chai';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { callbacksEndWithin, SHUTDOWN_CALLBACK_GRACE_MS } from '../../../../src/app/agent/shutdown-callback-grace.js';
import type { Cluster } from '../../../../src/domain/cluster/model/cluster.js';
import type { CallbackAction, CallbackRunner } from '../../../../src/ports/callbacks.js';
import type { Fencer } from '../../../../src/ports/fencer.js';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { singleNodePrimary } from './single-node-loop.js';

/** Records the callbacks; `hang`: they never end (idle() waits until release()). */
class Calls implements CallbackRunner {
  readonly calls: string[] = [];
  private release: (() => void) | null = null;
  private readonly running: Promise<void>;
  constructor(hang = false) {
    this.running = hang ? new Promise((resolve) => (this.release = resolve)) : Promise.resolve();
  }
  run(action: CallbackAction, role: string): void {
    this.calls.push(`${action} ${role}`);
  }
  /** Hears every idle() call. */
  onIdle: () => void = () => {};
  idle(): Promise<void> {
    this.onIdle();
    return this.release === null || this.calls.length === 0 ? Promise.resolve() : this.running;
  }
  end(): void {
    this.release?.();
  }
}

/** A fencer that takes a paused primary's lock over, so the agent may leave the primary running. */
const GUARDING: Fencer = {
  attach: async () => true,
  guard: () => undefined,
  unguard: () => undefined,
  detach: async () => undefined,
  handover: async () => true,
  status: () => ({ state: 'guarding', reason: null }),
};

/** Settles `p` while the fake clock moves on in steps of 500 ms (at most `maxMs`); returns how long it took. */
async function settleWith(clock: FakeClock, p: Promise<unknown>, maxMs = 30_000): Promise<number> {
  const from = clock.now();
  let done = false;
  void p.finally(() => (done = true));
  for (let i = 0; i < 5 && !done; i++) await Promise.resolve();
  while (!done && clock.now() - from < maxMs) await clock.advance(500);
  await p;
  return clock.now() - from;
}

describe('HaLoop: callbacks around the bootstrap and the shutdown', () => {
  it("a bootstrap calls nothing until it completed, then on_start primary once; the agent's shutdown stops the server and calls on_stop primary once", async () => {
    const callbacks = new Calls();
    const { loop, db } = await singleNodePrimary(0, { callbacks });
    expect(loop.snapshot().status.role).to.equal('primary');
    expect(callbacks.calls, 'nothing while the bootstrap ran').to.deep.equal([]);
    await loop.tickOnce();
    await loop.tickOnce();
    expect(callbacks.calls).to.deep.equal(['on_start primary']);
    expect(await loop.stop({ releaseLeader: true, stopDatabase: true, leaveRunningInPause: true })).to.equal('stopped');
    expect(db.isRunning).to.equal(false);
    expect(callbacks.calls).to.deep.equal(['on_start primary', 'on_stop primary']);
  });

  it('a shutdown in maintenance mode that leaves the primary running calls nothing', async () => {
    const callbacks = new Calls();
    const { loop, db } = await singleNodePrimary(0, { callbacks, fencer: GUARDING, bootstrapDcs: { ttl: 30, loop_wait: 10, pause: true } });
    await loop.tickOnce();
    expect(loop.snapshot().status.pause).to.equal(true);
    expect(await loop.stop({ releaseLeader: true, stopDatabase: true, leaveRunningInPause: true })).to.equal('left_running');
    expect(db.isRunning).to.equal(true);
    expect(callbacks.calls).to.deep.equal(['on_start primary']);
  });

  it('a shutdown told to leave the server alone (stopDatabase: false) calls nothing', async () => {
    const callbacks = new Calls();
    const { loop, db } = await singleNodePrimary(0, { callbacks });
    await loop.tickOnce();
    await loop.stop({ releaseLeader: true, stopDatabase: false });
    expect(db.isRunning).to.equal(true);
    expect(callbacks.calls).to.deep.equal(['on_start primary']);
  });

  it('an on_stop callback that does not end holds the exit back for the grace at most, after the key was released', async () => {
    const callbacks = new Calls(true);
    const logger = new MemoryLogger();
    const { loop, clock, store } = await singleNodePrimary(0, { callbacks, logger });
    await loop.tickOnce();
    let atWait: Promise<Cluster> | null = null;
    callbacks.onIdle = () => (atWait ??= store.read());
    const stopping = loop.stop({ releaseLeader: true, stopDatabase: true });
    const took = await settleWith(clock, stopping);
    expect(callbacks.calls).to.deep.equal(['on_start primary', 'on_stop primary']);
    expect(took).to.be.within(SHUTDOWN_CALLBACK_GRACE_MS, SHUTDOWN_CALLBACK_GRACE_MS + 1000);
    expect(atWait, 'the exit waited for the callback').not.to.equal(null);
    expect((await atWait!).leader, 'the key went before the wait').to.equal(null);
    expect(logger.messages('info').some((m) => m.startsWith('the on_stop callback still runs after'))).to.equal(true);
    callbacks.end();
  });

  it('callbacksEndWithin: true as soon as the callbacks ended, false once the time is up', async () => {
    const clock = new FakeClock();
    expect(await callbacksEndWithin(new Calls(), clock, 1000)).to.equal(true);
    expect(clock.pendingSleepers, 'no timer left behind').to.equal(0);
    const hanging = new Calls(true);
    hanging.run('on_stop', 'replica');
    const waiting = callbacksEndWithin(hanging, clock, 1000);
    await clock.advance(1000);
    expect(await waiting).to.equal(false);
  });
});
