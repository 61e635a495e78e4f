import { expect } from 'chai';
import { firstAckElsewhere, lastAckOf, longestWriteGap, longestWriteGapMs, lostAcks, untrustworthyHealthy, writableOverlapMs, writableStretches, type Ack, type HealthAnswer } from '../../chaos/checks.js';

/** Acks of `node` every 20 ms from `from` to `to`. */
function acks(node: string, from: number, to: number, firstId = 1): Ack[] {
  const out: Ack[] = [];
  for (let t = from, id = firstId; t <= to; t += 20, id++) out.push({ node, id, at: t });
  return out;
}

describe('chaos checks: what the suite concludes from its observations', () => {
  it('writable stretches split on gaps over a second', () => {
    const s = writableStretches([...acks('a', 0, 100), ...acks('a', 2000, 2100)]);
    expect(s.get('a')).to.deep.equal([{ from: 0, to: 100 }, { from: 2000, to: 2100 }]);
  });

  it('overlap of two writable primaries: 0 when one stops before the other starts, however close; the shared time otherwise', () => {
    expect(writableOverlapMs([...acks('a', 0, 1000), ...acks('b', 1001, 3000)])).to.equal(0);
    expect(writableOverlapMs([...acks('a', 0, 1000), ...acks('b', 900, 3000)])).to.equal(100);
    // The old primary coming back later as primary again is no overlap.
    expect(writableOverlapMs([...acks('a', 0, 1000), ...acks('b', 2500, 3000), ...acks('a', 4000, 5000)])).to.equal(0);
    // Nor within a second, when another primary's whole term fits between (switchovers there and back).
    expect(writableOverlapMs([...acks('a', 0, 1000), ...acks('b', 1300, 1700), ...acks('a', 1900, 3000)])).to.equal(0);
    // Two primaries at once interleave their acks: no gap splits them, whatever else happens around.
    expect(writableOverlapMs([...acks('a', 0, 1000), ...acks('b', 500, 1500)])).to.equal(500);
    expect(writableOverlapMs([...acks('a', 0, 1000), ...acks('b', 1300, 1700), ...acks('a', 1900, 3000), ...acks('c', 2000, 2500)])).to.equal(500);
  });

  it('lost acks, the first write elsewhere, the last write of a node, the longest gap', () => {
    const all = [...acks('a', 0, 100, 1), ...acks('b', 500, 600, 100)];
    expect(lostAcks(all, new Set([1, 2, 3, 4, 5, 6, 100, 101, 102, 103, 104, 105]))).to.deep.equal([]);
    expect(lostAcks(all, new Set([1, 2]))).to.have.length(4 + 6);
    expect(firstAckElsewhere(all, 'a', 50)).to.deep.equal({ node: 'b', id: 100, at: 500 });
    expect(firstAckElsewhere(all, 'a', 700)).to.equal(null);
    expect(lastAckOf(all, 'a')?.at).to.equal(100);
    expect(longestWriteGapMs(all, 0, 700)).to.equal(400);
    expect(longestWriteGap(all, 0, 700), 'where the gap lies').to.deep.equal({ ms: 400, start: 100, end: 500 });
    expect(longestWriteGap(all, 0, 2000), 'the stretch after the last write counts').to.deep.equal({ ms: 1400, start: 600, end: 2000 });
  });

  it('a health 200 from a node behind a timeline a primary already showed is untrustworthy; one sent before that is not', () => {
    const primaries = [{ at: 500, timeline: 1, node: 'a' }, { at: 1000, timeline: 2, node: 'c' }];
    const answer = (node: string, sentAt: number, timeline: number, replicationState: string | null = 'streaming', status = 200): HealthAnswer => ({ node, sentAt, at: sentAt + 5, status, timeline, replicationState });
    expect(untrustworthyHealthy([answer('b', 990, 1, null)], primaries)).to.deep.equal([]);
    expect(untrustworthyHealthy([answer('b', 1001, 1, null)], primaries)).to.have.length(1);
    expect(untrustworthyHealthy([answer('b', 1001, 1, null, 503)], primaries)).to.deep.equal([]);
    expect(untrustworthyHealthy([answer('b', 1001, 2)], primaries)).to.deep.equal([]);
    // The former primary must stream before it answers 200, whatever its timeline.
    expect(untrustworthyHealthy([answer('a', 1500, 2, null)], primaries, { node: 'a', since: 800 })).to.have.length(1);
    expect(untrustworthyHealthy([answer('a', 1500, 2)], primaries, { node: 'a', since: 800 })).to.deep.equal([]);
    // Once it streamed, the former primary is a replica like the others.
    expect(untrustworthyHealthy([answer('a', 1500, 2), answer('a', 1700, 2, 'in archive recovery')], primaries, { node: 'a', since: 800 })).to.deep.equal([]);
    // A primary that re-promoted itself onto a new timeline: its replica on the old one holds a prefix of its WAL.
    const same = [{ at: 500, timeline: 1, node: 'a' }, { at: 1000, timeline: 2, node: 'a' }];
    expect(untrustworthyHealthy([answer('b', 1001, 1)], same)).to.deep.equal([]);
  });
});
