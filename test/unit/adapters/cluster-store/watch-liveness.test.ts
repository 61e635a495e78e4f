import { expect } from 'chai';
import { OneAtATime, WatchLiveness } from '../../../../src/adapters/cluster-store/watch-liveness.js';

describe('WatchLiveness', () => {
  it('wakes every waiter when the stream comes up, and answers at once while it is up', async () => {
    const l = new WatchLiveness();
    const a = l.whenLive(5_000);
    const b = l.whenLive(5_000);
    l.up();
    expect(await Promise.all([a, b])).to.deep.equal([true, true]);
    expect(l.isLive).to.equal(true);
    expect(await l.whenLive(0)).to.equal(true);
  });

  it('answers false after the wait, and stays down after a break until up again', async () => {
    const l = new WatchLiveness();
    l.up();
    l.down();
    expect(l.isLive).to.equal(false);
    expect(await l.whenLive(10)).to.equal(false);
  });

  it('answers false to waiters when stopped, and to every later wait at once', async () => {
    const l = new WatchLiveness();
    const waiting = l.whenLive(5_000);
    l.stop();
    expect(await waiting).to.equal(false);
    expect(l.isStopped).to.equal(true);
    const t0 = Date.now();
    expect(await l.whenLive(5_000)).to.equal(false);
    expect(Date.now() - t0).to.be.below(1_000);
  });
});

describe('OneAtATime', () => {
  it('starts a task only once the one before it settled, rejected or not', async () => {
    const q = new OneAtATime();
    const order: string[] = [];
    let release!: () => void;
    const first = q.run(async () => {
      order.push('first starts');
      await new Promise<void>((r) => (release = r));
      order.push('first ends');
      throw new Error('first fails');
    });
    const second = q.run(async () => {
      order.push('second starts');
      return 2;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(order).to.deep.equal(['first starts']);
    release();
    await first.catch(() => undefined);
    expect(await second).to.equal(2);
    expect(order).to.deep.equal(['first starts', 'first ends', 'second starts']);
  });
});
