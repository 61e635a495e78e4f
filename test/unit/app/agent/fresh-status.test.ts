import { expect } from 'chai';
import { FreshStatus } from '../../../../src/app/agent/fresh-status.js';
import type { LocalFacts } from '../../../../src/domain/cluster/model/facts.js';
import type { NodeStatus } from '../../../../src/domain/cluster/model/status.js';
import { primaryFacts } from '../../domain/cluster/fixtures.js';
import { singleNodePrimary } from './single-node-loop.js';

/** A probe the test completes by hand: each call is recorded with the resolver of its facts. */
function manualProbe() {
  const calls: ((facts: LocalFacts) => void)[] = [];
  return {
    calls,
    peek: () => new Promise<LocalFacts>((resolve) => calls.push(resolve)),
  };
}

const statusOf = (facts: LocalFacts) => ({ state: 'running', role: 'primary', xlog: { location: facts.walLocation ?? 0 } }) as unknown as NodeStatus;
const location = (s: NodeStatus | null) => (s?.xlog && 'location' in s.xlog ? s.xlog.location : null);
const settle = () => new Promise((r) => setImmediate(r));

describe('FreshStatus: the leader race reads positions probed after it asked', () => {
  it('each answer comes from a probe started after the request; requests during a probe share the next one', async () => {
    const probe = manualProbe();
    const fresh = new FreshStatus(probe.peek, statusOf);
    const first = fresh.current();
    const alongside = fresh.current();
    await settle();
    expect(probe.calls, 'a request that arrives while a probe runs waits for the next').to.have.length(1);
    const third = fresh.current();
    probe.calls[0]!(primaryFacts({ walLocation: 1 }));
    expect(location(await first)).to.equal(1);
    await settle();
    expect(probe.calls, 'the requests that waited share one probe').to.have.length(2);
    probe.calls[1]!(primaryFacts({ walLocation: 2 }));
    expect(location(await alongside)).to.equal(2);
    expect(location(await third)).to.equal(2);
    const later = fresh.current();
    await settle();
    expect(probe.calls).to.have.length(3);
    probe.calls[2]!(primaryFacts({ walLocation: 3 }));
    expect(location(await later)).to.equal(3);
  });

  it('a probe that fails answers null, not an older status; the next request probes again', async () => {
    let fail = true;
    const fresh = new FreshStatus(async () => {
      if (fail) throw new Error('agent process is dead');
      return primaryFacts({ walLocation: 5 });
    }, statusOf);
    expect(await fresh.current()).to.equal(null);
    fail = false;
    expect(location(await fresh.current())).to.equal(5);
  });

  it('HaLoop.freshStatus shows WAL written after the last publication, and publishes nothing', async () => {
    const { db, loop } = await singleNodePrimary(0);
    const published = loop.snapshot();
    const before = location(published.status)!;
    await db.write(4096);
    const now = await loop.freshStatus();
    expect(location(now)).to.be.greaterThan(before);
    expect(now?.role).to.equal('primary');
    expect(loop.snapshot(), 'the published snapshot is the loop\'s').to.equal(published);
    await loop.stop({ stopDatabase: false, releaseLeader: false });
  });
});
