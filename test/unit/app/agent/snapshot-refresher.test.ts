import { expect } from 'chai';
import { singleNodePrimary } from './single-node-loop.js';

describe('HaLoop: the snapshot stays fresh between ticks', () => {
  it('WAL positions on /node are at most one refresh interval old, with loop_wait 10', async () => {
    const { clock, db, loop } = await singleNodePrimary(1000);
    loop.start();
    try {
      await clock.advance(100);
      const position = () => {
        const x = loop.snapshot().status.xlog;
        return x && 'location' in x ? x.location : null;
      };
      const before = position();
      const ticks = loop.snapshot().lastLoopAt;
      await db.write(4096);
      await clock.advance(1_100);
      expect(position()).to.be.greaterThan(before!);
      expect(loop.snapshot().lastLoopAt, 'no tick ran').to.equal(ticks);
    } finally {
      await loop.stop({ stopDatabase: false, releaseLeader: false });
    }
  });
});
