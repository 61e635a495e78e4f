import { expect } from 'chai';
import { shutdownPlan } from '../../../../../src/domain/cluster/ha/shutdown-plan.js';

describe('shutdownPlan: how a stopping agent leaves its server', () => {
  const base = { paused: true, running: true, inRecovery: false, holdsLock: true };

  it('outside maintenance mode, or with nothing running, the server is stopped', () => {
    expect(shutdownPlan({ ...base, paused: false })).to.deep.equal({ kind: 'stop', why: null });
    expect(shutdownPlan({ ...base, running: false })).to.deep.equal({ kind: 'stop', why: null });
  });

  it('in maintenance mode the leader hands its lock to the fencer (a standby leader too); a replica is left as it is', () => {
    expect(shutdownPlan(base)).to.deep.equal({ kind: 'handover' });
    expect(shutdownPlan({ ...base, inRecovery: true })).to.deep.equal({ kind: 'handover' });
    expect(shutdownPlan({ ...base, holdsLock: false, inRecovery: true })).to.deep.equal({ kind: 'leave' });
  });

  it('a primary without the lock, or a server whose recovery state is unknown, is stopped anyway, saying why', () => {
    for (const inRecovery of [false, null]) {
      const plan = shutdownPlan({ ...base, holdsLock: false, inRecovery });
      expect(plan.kind).to.equal('stop');
      expect(plan.kind === 'stop' && plan.why).to.match(/without the leader lock/);
    }
  });
});
