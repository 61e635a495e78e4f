import { expect } from 'chai';
import { syncKeyToRestore } from '../../../../../src/domain/cluster/ha/promotion-undo.js';
import type { SyncState } from '../../../../../src/domain/cluster/model/cluster.js';

const replaced = { leader: 'node1', syncStandby: ['node2'], quorum: 0 };
/** node2's key, written just before it promoted on timeline 3. */
const beforePromotion: SyncState = { leader: 'node2', syncStandby: [], quorum: 0, promoting: { timeline: 3, replaced }, revision: '7' };

describe('the sync key a fencer puts back for its dead agent', () => {
  it('is the replaced key when the server is still in recovery on the timeline it was on', () => {
    expect(syncKeyToRestore(beforePromotion, 'node2', { inRecovery: true, timeline: 3 })).to.deep.equal(replaced);
  });

  it('is none when the server may have promoted: out of recovery, or on a later timeline', () => {
    expect(syncKeyToRestore(beforePromotion, 'node2', { inRecovery: false, timeline: 3 })).to.equal(null);
    expect(syncKeyToRestore(beforePromotion, 'node2', { inRecovery: true, timeline: 4 })).to.equal(null);
    expect(syncKeyToRestore(beforePromotion, 'node2', null)).to.equal(null);
  });

  it("is none for another node's key, a key naming standbys, or one without what it replaced", () => {
    expect(syncKeyToRestore(beforePromotion, 'node3', { inRecovery: true, timeline: 3 })).to.equal(null);
    expect(syncKeyToRestore({ ...beforePromotion, syncStandby: ['node1'] }, 'node2', { inRecovery: true, timeline: 3 })).to.equal(null);
    const { promoting: _, ...plain } = beforePromotion;
    expect(syncKeyToRestore(plain, 'node2', { inRecovery: true, timeline: 3 })).to.equal(null);
    expect(syncKeyToRestore(null, 'node2', { inRecovery: true, timeline: 3 })).to.equal(null);
  });
});
