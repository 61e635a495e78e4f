import { expect } from 'chai';
import type { Member } from '../../../../../src/domain/cluster/model/cluster.js';
import { cascadeProblem, chooseUpstream, upstreamNameOf } from '../../../../../src/domain/cluster/rules/upstream.js';
import { cluster, member } from '../ha/fixtures.js';

/** A 4-node cluster led by node1; node4 tagged replicatefrom node2 unless told otherwise. */
function view(over: Record<string, Partial<Member>> = {}) {
  const names = ['node1', 'node2', 'node3', 'node4'];
  return cluster('node1', {
    members: names.map((n) =>
      member(n, {
        ...(n === 'node1' ? { role: 'primary' } : {}),
        ...(n === 'node4' ? { tags: { replicatefrom: 'node2' } } : {}),
        ...over[n],
      }),
    ),
  });
}

describe('domain/cluster/rules/upstream: where a replica streams from', () => {
  it('a cascading replica streams from its replicatefrom member while that one runs as a replica', () => {
    const c = view();
    const choice = chooseUpstream(c, 'node4', { replicatefrom: 'node2' });
    expect(choice.kind).to.equal('member');
    expect(choice.kind === 'member' && choice.member.name).to.equal('node2');
    expect(upstreamNameOf(c, c.members[3]!)).to.equal('node2');
  });

  it('falls back to the leader when the named member is gone, not running, not a replica or without an address; back once it runs', () => {
    const reasons = [
      [view({ node2: { state: 'stopped' } }), /node2 is not running \(stopped\)/],
      [view({ node2: { role: 'primary' } }), /does not run as a replica \(primary\)/],
      [view({ node2: { connUrl: '' } }), /has not published its address/],
      [{ ...view(), members: view().members.filter((m) => m.name !== 'node2') }, /node2 is not a member/],
    ] as const;
    for (const [c, why] of reasons) {
      const choice = chooseUpstream(c, 'node4', { replicatefrom: 'node2' });
      expect(choice.kind).to.equal('leader');
      expect(choice.kind === 'leader' && choice.fallback).to.match(why);
    }
    expect(chooseUpstream(view(), 'node4', { replicatefrom: 'node2' }).kind, 'running again').to.equal('member');
  });

  it('the leader named in replicatefrom, itself, no tag: the leader; nostream: the archive only', () => {
    expect(chooseUpstream(view(), 'node4', { replicatefrom: 'node1' })).to.deep.equal({ kind: 'leader', fallback: null });
    expect(chooseUpstream(view(), 'node4', { replicatefrom: 'node4' })).to.deep.equal({ kind: 'leader', fallback: null });
    expect(chooseUpstream(view(), 'node4', {})).to.deep.equal({ kind: 'leader', fallback: null });
    expect(chooseUpstream(view(), 'node4', { nostream: true, replicatefrom: 'node2' })).to.deep.equal({ kind: 'archive' });
  });

  it('a replicatefrom cycle streams from the leader instead; a chain through a member that cannot feed ends there', () => {
    const cycle = view({ node2: { tags: { replicatefrom: 'node3' } }, node3: { tags: { replicatefrom: 'node4' } } });
    expect(cascadeProblem(cycle, 'node4', 'node2')).to.match(/a cycle/);
    expect(chooseUpstream(cycle, 'node4', { replicatefrom: 'node2' }).kind).to.equal('leader');
    // node3's own upstream (node4) is fine: it is node4 that closes the loop.
    const chain = view({ node2: { tags: { replicatefrom: 'node3' } }, node3: { tags: { replicatefrom: 'node4' }, state: 'stopped' } });
    expect(cascadeProblem(chain, 'node4', 'node2')).to.equal(null);
    const toLeader = view({ node2: { tags: { replicatefrom: 'node1' } } });
    expect(cascadeProblem(toLeader, 'node4', 'node2')).to.equal(null);
  });

  it('the leader has no upstream; an ordinary replica streams from the leader (null)', () => {
    const c = view();
    expect(upstreamNameOf(c, c.members[0]!)).to.equal(null);
    expect(upstreamNameOf(c, c.members[1]!)).to.equal(null);
  });
});
