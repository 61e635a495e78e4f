import { expect } from 'chai';
import { answersFor, type EarlyPeers } from '../../../../src/app/agent/peer-queries.js';
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
