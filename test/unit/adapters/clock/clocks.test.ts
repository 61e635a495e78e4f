import { expect } from 'chai';
import { stat } from 'node:fs';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { SystemClock } from '../../../../src/adapters/clock/system-clock.js';

describe('FakeClock', () => {
  it('starts at the given time and only moves when advanced', async () => {
    const clock = new FakeClock(1000);
    expect(clock.now()).to.equal(1000);
    await clock.advance(250);
    expect(clock.now()).to.equal(1250);
  });

  it('defaults to 2024-01-01T00:00:00Z', () => {
    expect(new Date(new FakeClock().now()).toISOString()).to.equal('2024-01-01T00:00:00.000Z');
  });

  it('wakes sleepers in due-time order, each at its own time', async () => {
    const clock = new FakeClock(0);
    const woke: Array<[string, number]> = [];
    void clock.sleep(300).then(() => woke.push(['c', clock.now()]));
    void clock.sleep(100).then(() => woke.push(['a', clock.now()]));
    void clock.sleep(200).then(() => woke.push(['b', clock.now()]));
    expect(clock.pendingSleepers).to.equal(3);
    await clock.advance(250);
    expect(woke).to.deep.equal([['a', 100], ['b', 200]]);
    expect(clock.pendingSleepers).to.equal(1);
    expect(clock.now()).to.equal(250);
    await clock.advance(50);
    expect(woke.map((w) => w[0])).to.deep.equal(['a', 'b', 'c']);
  });

  it('wakes equal due times in the order they started sleeping', async () => {
    const clock = new FakeClock(0);
    const woke: string[] = [];
    for (const name of ['x', 'y', 'z']) void clock.sleep(10).then(() => woke.push(name));
    await clock.advance(10);
    expect(woke).to.deep.equal(['x', 'y', 'z']);
  });

  it('lets async loops progress through several iterations within one advance', async () => {
    const clock = new FakeClock(0);
    const ticks: number[] = [];
    let stop = false;
    const loop = (async () => {
      while (!stop) {
        await Promise.resolve();
        ticks.push(clock.now());
        await clock.sleep(10);
      }
    })();
    await clock.advance(35);
    expect(ticks).to.deep.equal([0, 10, 20, 30]);
    stop = true;
    await clock.advance(10);
    await loop;
    expect(clock.pendingSleepers).to.equal(0);
  });

  it('resolves a sleep early, without error, when its signal aborts', async () => {
    const clock = new FakeClock(0);
    const ac = new AbortController();
    let done = false;
    const p = clock.sleep(1000, ac.signal).then(() => (done = true));
    ac.abort();
    await p;
    expect(done).to.equal(true);
    expect(clock.now()).to.equal(0);
    expect(clock.pendingSleepers).to.equal(0);
  });

  it('resolves at once for an already aborted signal or a non-positive duration', async () => {
    const clock = new FakeClock(0);
    const ac = new AbortController();
    ac.abort();
    await clock.sleep(1000, ac.signal);
    await clock.sleep(0);
    await clock.sleep(-5);
    expect(clock.pendingSleepers).to.equal(0);
  });

  it('advanceToNext jumps to the earliest sleeper', async () => {
    const clock = new FakeClock(0);
    let woke = false;
    void clock.sleep(500).then(() => (woke = true));
    expect(clock.nextWakeAt()).to.equal(500);
    expect(await clock.advanceToNext()).to.equal(true);
    expect(woke).to.equal(true);
    expect(clock.now()).to.equal(500);
    expect(await clock.advanceToNext()).to.equal(false);
  });

  it('set() jumps forward but never back', () => {
    const clock = new FakeClock(100);
    clock.set(200);
    expect(clock.now()).to.equal(200);
    expect(() => clock.set(150)).to.throw(RangeError);
  });
});

describe('SystemClock', () => {
  it('reads real time and sleeps for real', async () => {
    const clock = new SystemClock();
    const t0 = clock.now();
    expect(Math.abs(t0 - Date.now())).to.be.lessThan(50);
    await clock.sleep(20);
    expect(clock.now() - t0).to.be.at.least(15);
  });

  it('turn() resolves after the timers that fell due, even when asked from an I/O callback', async () => {
    const clock = new SystemClock();
    const order = await new Promise<string[]>((resolve) => {
      // An fs callback runs in the poll phase, where one setImmediate alone runs before the timers.
      stat('.', () => {
        const seen: string[] = [];
        setTimeout(() => seen.push('timer'), 1);
        const t0 = performance.now();
        while (performance.now() - t0 < 3); // the timer is due before the turn's end
        void clock.turn().then(() => {
          seen.push('turn');
          resolve(seen);
        });
      });
    });
    expect(order).to.deep.equal(['timer', 'turn']);
  });

  it('returns early when aborted', async () => {
    const clock = new SystemClock();
    const ac = new AbortController();
    const t0 = Date.now();
    setTimeout(() => ac.abort(), 10);
    await clock.sleep(5000, ac.signal);
    expect(Date.now() - t0).to.be.lessThan(1000);
  });
});
