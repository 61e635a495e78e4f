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
});
