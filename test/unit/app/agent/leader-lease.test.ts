import { expect } from 'chai';
import { LeaderLease } from '../../../../src/app/agent/leader-lease.js';

describe('LeaderLease', () => {
  it('a renewal answered after the lock was given up (a job released it meanwhile) does not bring the lock back', () => {
    const lease = new LeaderLease();
    const seen: (number | null)[] = [];
    lease.onChange = (d) => seen.push(d);
    lease.granted(1_000);
    const mark = lease.mark();
    lease.forget();
    lease.renewedSince(mark, 2_000);
    expect(lease.deadline).to.equal(null);
    expect(seen).to.deep.equal([1_000, null]);
  });

  it('a renewal answered while the lock stayed held extends it', () => {
    const lease = new LeaderLease();
    lease.granted(1_000);
    const mark = lease.mark();
    lease.renewedSince(mark, 2_000);
    expect(lease.deadline).to.equal(2_000);
  });

  it('a key the watch showed taken is in doubt until a renewal sent after that answers; one sent before does not clear it', () => {
    const lease = new LeaderLease();
    lease.granted(1_000);
    const before = { mark: lease.mark(), doubts: lease.doubtsSoFar() };
    lease.doubtKey();
    expect(lease.keyInDoubt).to.equal(true);
    lease.renewedSince(before.mark, 2_000, before.doubts);
    expect(lease.keyInDoubt, 'a renewal sent before the event').to.equal(true);
    const after = { mark: lease.mark(), doubts: lease.doubtsSoFar() };
    lease.renewedSince(after.mark, 3_000, after.doubts);
    expect(lease.keyInDoubt).to.equal(false);
  });

  it('no doubt without the lock, and none left once it is given up', () => {
    const lease = new LeaderLease();
    lease.doubtKey();
    expect(lease.keyInDoubt).to.equal(false);
    lease.granted(1_000);
    lease.doubtKey();
    lease.forget();
    expect(lease.keyInDoubt).to.equal(false);
  });
});
