import { expect } from 'chai';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { singleNodePrimary } from './single-node-loop.js';

/** A fake clock that can let the event loop turn: it records what was published at each turn. */
class TurningClock extends FakeClock {
  readonly seen: string[] = [];
  onTurn: () => string = () => '';

  async turn(): Promise<void> {
    this.seen.push(this.onTurn());
    await Promise.resolve();
  }
}

describe('TickPipeline: a tick in parts, on turns of the event loop', () => {
  it('turns three times a tick when the clock can (at its start, after the probe, between the decision published and the actions), and in a job after each re-probe', async () => {
    const clock = new TurningClock();
    const { loop, db, store } = await singleNodePrimary(1000, { clock });
    let ticks = 0;
    const published: string[] = [];
    const publish = store.publishMember.bind(store);
    store.publishMember = (member, record, ttl) => {
      published.push(record.state);
      return publish(member, record, ttl);
    };
    clock.onTurn = () => `${ticks}: ${loop.snapshot().status.state}, member record ${published.at(-1) ?? 'not yet published'}`;
    clock.seen.length = 0;
    db.crash();
    ticks = 1;
    await loop.tickOnce();
    await loop.jobDone();
    // First turn: nothing read yet. Second: the probe saw the crash, nothing is published yet.
    // Third: the decision (the crash) is what a health check reads; the member record comes
    // with the actions, after it. Fourth: the restart's start ran and the server was probed again,
    // and what the probe saw (running) is published after this turn, not in the probe's.
    expect(clock.seen).to.deep.equal([
      '1: running, member record not yet published',
      '1: running, member record not yet published',
      '1: crashed, member record not yet published',
      '1: crashed, member record crashed',
    ]);
    expect(loop.snapshot().status.state).to.equal('running');
    ticks = 2;
    await loop.tickOnce();
    expect(clock.seen.filter((s) => s.startsWith('2:'))).to.have.length(3);
  });

  it("a clock without turns (the simulation's) runs a tick in one go, before the event loop turns", async () => {
    const { loop, db } = await singleNodePrimary(1000);
    db.crash();
    let seen: string | null = null;
    void loop.tickOnce().then(() => {
      seen = loop.snapshot().status.state;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen, 'the tick ended, the crash published, within the turn it started in').to.equal('crashed');
  });
});
