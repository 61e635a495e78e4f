import { expect } from 'chai';
import { canLead, failoverPriority, integerTag, noLeadReason, noStream, replicateFrom, syncPriority, topologyTagProblems } from '../../../../../src/domain/cluster/model/topology-tags.js';

describe('domain/cluster/model/topology-tags', () => {
  it('failover_priority: default 1, 0 never leads (alone, as Patroni reads it); an explicit nofailover decides', () => {
    expect([canLead({}), failoverPriority({})]).to.deep.equal([true, 1]);
    expect([canLead({ failover_priority: 3 }), failoverPriority({ failover_priority: 3 })]).to.deep.equal([true, 3]);
    expect([canLead({ failover_priority: 0 }), failoverPriority({ failover_priority: 0 })]).to.deep.equal([false, 0]);
    expect(canLead({ failover_priority: '0' }), 'a string from another member or the environment').to.equal(false);
    expect([canLead({ nofailover: true }), failoverPriority({ nofailover: true })]).to.deep.equal([false, 0]);
    expect(canLead({ nofailover: 'yes', failover_priority: 2 })).to.equal(false);
    expect(canLead({ nofailover: false, failover_priority: 0 })).to.equal(true);
    expect(noLeadReason({ nofailover: true })).to.equal('tagged nofailover');
    expect(noLeadReason({ failover_priority: 0 })).to.equal('tagged failover_priority 0');
  });

  it('sync_priority: default 1; nosync and nostream make it 0', () => {
    expect(syncPriority({})).to.equal(1);
    expect(syncPriority({ sync_priority: 5 })).to.equal(5);
    expect(syncPriority({ sync_priority: 0 })).to.equal(0);
    expect(syncPriority({ nosync: true, sync_priority: 5 })).to.equal(0);
    expect(syncPriority({ nostream: true })).to.equal(0);
  });

  it('reads whole numbers only, replicatefrom and nostream', () => {
    expect(integerTag({ p: 2 }, 'p')).to.equal(2);
    expect(integerTag({ p: ' 7 ' }, 'p')).to.equal(7);
    expect(integerTag({ p: 1.5 }, 'p')).to.equal(null);
    expect(integerTag({ p: 'high' }, 'p')).to.equal(null);
    expect(replicateFrom({ replicatefrom: ' node2 ' })).to.equal('node2');
    expect(replicateFrom({ replicatefrom: '' })).to.equal(null);
    expect(noStream({ nostream: 'on' })).to.equal(true);
  });

  it('lists every contradiction of a node\'s own tags', () => {
    expect(topologyTagProblems({ failover_priority: 2, sync_priority: 0, replicatefrom: 'node2', nofailover: false }, 'node1')).to.deep.equal([]);
    const problems = topologyTagProblems(
      { failover_priority: -1, sync_priority: 'x', nofailover: 'maybe', nostream: true, replicatefrom: 'node2' },
      'node1',
    );
    expect(problems.map((p) => p.path)).to.deep.equal(['tags.failover_priority', 'tags.sync_priority', 'tags.nofailover', 'tags.replicatefrom']);
    expect(problems[3]!.message).to.match(/nostream is set/);
    expect(topologyTagProblems({ nofailover: true, failover_priority: 1 }, 'n')[0]!.message).to.match(/contradicts nofailover: true/);
    expect(topologyTagProblems({ nofailover: false, failover_priority: 0 }, 'n')[0]!.message).to.match(/contradicts nofailover: false/);
    expect(topologyTagProblems({ nosync: true, sync_priority: 2 }, 'n')[0]!.message).to.match(/contradicts nosync: true/);
    expect(topologyTagProblems({ replicatefrom: 'n' }, 'n')[0]!.message).to.match(/another member than this node itself/);
    expect(topologyTagProblems({ replicatefrom: 'a b' }, 'n')[0]!.message).to.match(/expected a member name/);
  });

  it("a tag one or two typing errors from one Warden knows is refused (it would silently do nothing); the operator's own tags pass", () => {
    const problems = topologyTagProblems({ nofailovr: true, NoSync: true, replicat_from: 'x', dc: 'east', rack: 3, nofailover: false }, 'n');
    expect(problems.map((p) => p.path)).to.deep.equal(['tags.nofailovr', 'tags.NoSync', 'tags.replicat_from']);
    expect(problems[0]!.message).to.match(/^not a tag Warden knows, and close to nofailover \(a typo\? it would do nothing\)/);
  });
});
