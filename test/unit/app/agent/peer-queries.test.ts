import { expect } from 'chai';
import { answersFor, peerTargets, type EarlyPeers } from '../../../../src/app/agent/peer-queries.js';
import { EMPTY_CLUSTER, type Cluster, type Member } from '../../../../src/domain/cluster/model/cluster.js';
import type { NodeStatus } from '../../../../src/domain/cluster/model/status.js';

const status = (role: string) => ({ state: 'running', role }) as unknown as NodeStatus;

describe('peer queries: the answers asked at the start of a tick', () => {
  const early = (targets: Record<string, string>, answers: Record<string, NodeStatus | null>): EarlyPeers => ({
    targets: new Map(Object.entries(targets)),
    statuses: Promise.resolve(new Map(Object.entries(answers))),
  });

  it('serve the race when they asked every member it would ask, at the same address; a member gone meanwhile is dropped', async () => {
    const e = early({ node1: 'http://a:8008', node3: 'http://c:8008' }, { node1: null, node3: status('replica') });
    expect(await answersFor(e, new Map([['node1', 'http://a:8008'], ['node3', 'http://c:8008']]))).to.deep.equal(new Map([['node1', null], ['node3', status('replica')]]));
    // The dead leader's member key expired with its lock: the race asks node3 alone.
    expect(await answersFor(e, new Map([['node3', 'http://c:8008']]))).to.deep.equal(new Map([['node3', status('replica')]]));
  });

  it('do not when a member was not asked (joined meanwhile) or moved, or nobody was asked', async () => {
    const e = early({ node3: 'http://c:8008' }, { node3: status('replica') });
    expect(await answersFor(e, new Map([['node3', 'http://c:8008'], ['node4', 'http://d:8008']]))).to.equal(null);
    expect(await answersFor(e, new Map([['node3', 'http://c2:8008']]))).to.equal(null);
    expect(await answersFor(null, new Map([['node3', 'http://c:8008']]))).to.equal(null);
  });
});

describe('peer queries: whom the race asks', () => {
  const member = (name: string, apiUrl: string) => ({ name, apiUrl }) as unknown as Member;
  const cluster = (members: Member[], failsafe: Record<string, string> | null = null): Cluster => ({ ...EMPTY_CLUSTER, members, failsafe });

  it('every other member, the failsafe key\'s nodes, and the last leader whose member key went with its lease', () => {
    const c = cluster([member('node1', 'http://a:8008'), member('node2', 'http://b:8008')], { node4: 'http://d:8008' });
    expect(peerTargets(c, 'node1')).to.deep.equal(new Map([['node2', 'http://b:8008'], ['node4', 'http://d:8008']]));
    // A lease revoked before its time took node3's leader key and member key together: its server may still write.
    expect(peerTargets(c, 'node1', { name: 'node3', apiUrl: 'http://c:8008' })).to.deep.equal(
      new Map([['node2', 'http://b:8008'], ['node4', 'http://d:8008'], ['node3', 'http://c:8008']]),
    );
  });

  it('asks a last leader still listed at its listed address, and never this node itself', () => {
    const c = cluster([member('node1', 'http://a:8008'), member('node3', 'http://c2:8008')]);
    expect(peerTargets(c, 'node1', { name: 'node3', apiUrl: 'http://c:8008' })).to.deep.equal(new Map([['node3', 'http://c2:8008']]));
    expect(peerTargets(c, 'node1', { name: 'node1', apiUrl: 'http://a:8008' })).to.deep.equal(new Map([['node3', 'http://c2:8008']]));
  });
});
