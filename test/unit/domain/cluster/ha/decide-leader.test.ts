import { expect } from 'chai';
import { decide } from '../../../../../src/domain/cluster/ha/decide.js';
import type { Action } from '../../../../../src/domain/cluster/ha/decision.js';
import { stoppedFacts } from '../../../../../src/domain/cluster/model/facts.js';
import { cluster, failover, input, leaderInput, NOW, peerStatus, primaryFacts, replicaFacts, types } from './fixtures.js';

const peers = (over: Record<string, ReturnType<typeof peerStatus> | null> = {}) =>
  new Map(Object.entries({ node2: peerStatus('replica', 5000), node3: peerStatus('replica', 5000), ...over }));

describe('decide(): the leader', () => {
  it('refreshes the leader key first, then publishes the status optime', () => {
    const d = decide(leaderInput());
    expect(types(d)).to.deep.equal(['refreshLeader', 'writeStatus']);
    expect(d.actions[1]).to.deep.include({ optime: 5000 });
    expect(d.job).to.equal(null);
  });

  it('refreshes while the view names it even when its own deadline passed (e.g. after an agent restart)', () => {
    const d = decide(leaderInput({ lockDeadline: null }));
    expect(types(d)[0]).to.equal('refreshLeader');
  });

  it('arms the watchdog when leading without it armed, kicks it once armed, disarms it in pause', () => {
    const node = { ...leaderInput().node, watchdogMode: 'automatic' as const };
    expect(types(decide(leaderInput({ node })))).to.include('armWatchdog');
    expect(types(decide(leaderInput({ node, watchdog: { active: true, usable: true } })))).to.include('kickWatchdog');
    expect(types(decide(leaderInput({ node, raw: { pause: true }, watchdog: { active: true, usable: true } })))).to.include('disarmWatchdog');
  });

  it('watchdog required and no longer usable: gives the key up and demotes', () => {
    const node = { ...leaderInput().node, watchdogMode: 'required' as const };
    const d = decide(leaderInput({ node, watchdog: { active: true, usable: false } }));
    expect(d.job).to.equal('demote');
    expect(types(d)).to.include('releaseLeader');
  });

  it('writes the failsafe key with every member when failsafe mode is on and it changed', () => {
    const d = decide(leaderInput({ raw: { failsafe_mode: true } }));
    const w = d.actions.find((a) => a.type === 'writeFailsafe') as Extract<Action, { type: 'writeFailsafe' }>;
    expect(Object.keys(w.members).sort()).to.deep.equal(['node1', 'node2', 'node3']);
    // Failsafe mode off: the leader, holding its lock through the DCS, empties a key that lists members, once.
    const listed = leaderInput({ raw: { failsafe_mode: false } });
    const withKey = { ...listed, cluster: { ...listed.cluster, failsafe: { node1: 'http://node1:8008', node2: 'http://node2:8008' } } };
    expect(decide(withKey).actions.filter((a) => a.type === 'writeFailsafe')).to.deep.equal([{ type: 'writeFailsafe', members: {} }]);
    const emptied = { ...listed, cluster: { ...listed.cluster, failsafe: {} } };
    expect(types(decide(emptied))).to.not.include('writeFailsafe');
  });

  it('a primary seeing another node in the leader key demotes at once (unless paused)', () => {
    const d = decide(input({ facts: primaryFacts() }));
    expect(d.job).to.equal('demote');
    expect(types(d).slice(0, 3)).to.deep.equal(['forgetLock', 'terminateSessions', 'stop']);
    expect(d.actions[2]).to.deep.include({ mode: 'immediate' });
    expect(types(decide(input({ facts: primaryFacts(), raw: { pause: true } })))).to.deep.equal([]);
  });

  it('holding the key as a replica: promotes; paused: releases the key instead', () => {
    const me = leaderInput({ facts: replicaFacts(5000, null) });
    expect(decide(me).job).to.equal('promote');
    expect(types(decide({ ...me, config: { ...me.config, pause: true } }))).to.deep.equal(['releaseLeader']);
  });

  it('pause: a leader whose server stopped gives the key up and does not start it', () => {
    const d = decide(leaderInput({ raw: { pause: true }, facts: { ...primaryFacts(), running: false, inRecovery: null, state: 'stopped' } }));
    expect(types(d)).to.deep.equal(['releaseLeader']);
  });
});

describe('decide(): DCS unreachable', () => {
  it('a primary demotes at once: sessions cut, immediate stop, restart as replica', () => {
    const d = decide(leaderInput({ dcsReachable: false }));
    expect(d.job).to.equal('demote');
    expect(types(d)).to.deep.equal(['forgetLock', 'terminateSessions', 'stop', 'disarmWatchdog', 'remember', 'start']);
    expect(d.actions[5]).to.deep.include({ standby: true });
  });

  it('paused: the primary stays', () => {
    expect(types(decide(leaderInput({ dcsReachable: false, raw: { pause: true } })))).to.deep.equal([]);
  });

  it('failsafe mode: asks the members first; all confirm: stays and extends its lock; one silent: demotes', () => {
    const fsCluster = cluster('node1', { failsafe: { node1: 'http://node1:8008', node2: 'http://node2:8008', node3: 'http://node3:8008' } });
    const base = leaderInput({ dcsReachable: false, raw: { failsafe_mode: true }, cluster: fsCluster });
    expect(decide(base).need).to.equal('failsafe');
    const ok = decide({ ...base, failsafeConfirmed: true });
    expect(types(ok)).to.deep.equal(['extendLockByFailsafe']);
    expect(ok.publish.failsafeActive).to.equal(true);
    expect(decide({ ...base, failsafeConfirmed: false }).job).to.equal('demote');
  });

  it('a leader whose lock renewal fails while reads still work steps down now (not at its deadline), or stays by failsafe and keeps retrying the renewal', () => {
    // One failed renewal is retried (another etcd member may answer); failing for retry_timeout (10 s here), it steps down.
    expect(decide(leaderInput({ lockRenewalFailingSince: NOW - 3000 })).job).to.equal(null);
    const failing = leaderInput({ lockRenewalFailingSince: NOW - 10_000 });
    const d = decide(failing);
    expect(d.job).to.equal('demote');
    expect(d.message).to.match(/DCS is not accessible/);
    const fsCluster = cluster('node1', { failsafe: { node1: 'http://node1:8008', node2: 'http://node2:8008', node3: 'http://node3:8008' } });
    const fs = leaderInput({ lockRenewalFailingSince: NOW - 10_000, raw: { failsafe_mode: true }, cluster: fsCluster });
    expect(decide(fs).need).to.equal('failsafe');
    expect(types(decide({ ...fs, failsafeConfirmed: true }))).to.deep.equal(['extendLockByFailsafe', 'refreshLeader']);
    // A replica's failing renewal means nothing: it holds no lock.
    expect(decide(input({ lockRenewalFailingSince: NOW - 10_000 })).job).to.equal(null);
    // A leader whose server is down goes the usual way, which renews again (its member record keeps the lease alive otherwise).
    const down = decide(leaderInput({ lockRenewalFailingSince: NOW - 10_000, facts: { ...stoppedFacts('crashed', true), systemIdentifier: '7300', timeline: 1 } }));
    expect(types(down)[0]).to.equal('refreshLeader');
  });

  it('failsafe mode with a failsafe key that lists no other member (the leader was alone): demotes, nobody could confirm it', () => {
    const alone = cluster('node1', { failsafe: { node1: 'http://node1:8008' } });
    expect(decide(leaderInput({ dcsReachable: false, raw: { failsafe_mode: true }, cluster: alone })).job).to.equal('demote');
  });

  it('failsafe mode without a failsafe key (never written): demotes', () => {
    expect(decide(leaderInput({ dcsReachable: false, raw: { failsafe_mode: true } })).job).to.equal('demote');
  });

  it('a replica does nothing; a stopped replica starts read-only', () => {
    expect(types(decide(input({ dcsReachable: false })))).to.deep.equal([]);
    const d = decide(input({ dcsReachable: false, facts: { ...replicaFacts(), running: false, inRecovery: null, state: 'stopped' } }));
    expect(types(d)).to.deep.equal(['start']);
    expect(d.actions[0]).to.deep.include({ standby: true });
  });
});

describe('decide(): manual switchover on the leader', () => {
  it('a candidate that passes the rules: graceful demote (refresh, checkpoint, fast stop, final position, release, start as replica)', () => {
    const base = leaderInput({ cluster: cluster('node1', { failover: failover('node1', 'node2') }) });
    expect(decide(base).need).to.equal('peers');
    const d = decide({ ...base, peers: peers() });
    expect(d.job).to.equal('demote');
    expect(types(d)).to.deep.equal(['refreshLeader', 'checkpoint', 'stop', 'disarmWatchdog', 'writeFinalPosition', 'releaseLeader', 'remember', 'start']);
    expect(d.actions[2]).to.deep.include({ mode: 'fast' });
  });

  it('an ineligible candidate (unreachable, nofailover, lagging): the key is cleared and the leader stays', () => {
    const base = leaderInput({ cluster: cluster('node1', { failover: failover('node1', 'node2') }) });
    for (const st of [null, peerStatus('replica', 5000, { tags: { nofailover: true } }), peerStatus('replica', 10)]) {
      const d = decide({ ...base, peers: peers({ node2: st }), config: { ...base.config, maximum_lag_on_failover: 1000 } });
      expect(types(d), JSON.stringify(st)).to.include('clearFailover');
      expect(d.job).to.equal(null);
    }
  });

  it('without a candidate: demotes when some member is eligible', () => {
    const base = leaderInput({ cluster: cluster('node1', { failover: failover('node1', null) }) });
    expect(decide({ ...base, peers: peers({ node2: null }) }).job).to.equal('demote');
    expect(types(decide({ ...base, peers: peers({ node2: null, node3: null }) }))).to.include('clearFailover');
  });

  it('synchronous mode: a switchover candidate must be in the sync key', () => {
    const sync = { leader: 'node1', syncStandby: ['node3'], quorum: 0, revision: '3' };
    const base = leaderInput({ raw: { synchronous_mode: true }, cluster: cluster('node1', { failover: failover('node1', 'node2'), sync }), peers: peers() });
    expect(types(decide(base))).to.include('clearFailover');
    const ok = { ...base, cluster: cluster('node1', { failover: failover('node1', 'node3'), sync }) };
    expect(decide(ok).job).to.equal('demote');
  });

  it('primary_stop_timeout bounds the shutdown only in synchronous mode: escalated to immediate, an asynchronous primary would leave no final position and lose commits', () => {
    const sync = { leader: 'node1', syncStandby: ['node3'], quorum: 0, revision: '3' };
    const stopOf = (raw: Record<string, unknown>) => {
      const d = decide(leaderInput({ raw, cluster: cluster('node1', { failover: failover('node1', 'node3'), sync }), peers: peers() }));
      expect(d.job).to.equal('demote');
      return d.actions.find((a) => a.type === 'stop');
    };
    expect(stopOf({ primary_stop_timeout: 30 })).to.not.have.property('timeoutMs');
    expect(stopOf({ primary_stop_timeout: 30, synchronous_mode: true })).to.deep.include({ mode: 'fast', timeoutMs: 30_000 });
    expect(stopOf({ primary_stop_timeout: 30, synchronous_mode: 'quorum' })).to.deep.include({ timeoutMs: 30_000 });
    expect(stopOf({ synchronous_mode: true })).to.not.have.property('timeoutMs');
  });

  it('a key naming another leader, or the leader itself as candidate, or a non-member, is cleared', () => {
    for (const fk of [failover('node3', 'node2'), failover('node1', 'node1'), failover('node1', 'ghost')]) {
      expect(types(decide(leaderInput({ cluster: cluster('node1', { failover: fk }) }))), JSON.stringify(fk)).to.include('clearFailover');
    }
  });

  it('pause: no candidate is refused (cleared); a candidate is allowed', () => {
    const paused = (fk: ReturnType<typeof failover>) => leaderInput({ raw: { pause: true }, cluster: cluster('node1', { failover: fk }), peers: peers() });
    expect(types(decide(paused(failover('node1', null))))).to.include('clearFailover');
    expect(decide(paused(failover('node1', 'node2'))).job).to.equal('demote');
  });

  it('scheduled: waits (and asks to be woken) until the time, runs when due, drops it when stale; paused, holds it', () => {
    const at = new Date(NOW + 60_000).toISOString();
    const waiting = decide(leaderInput({ cluster: cluster('node1', { failover: failover('node1', 'node2', at) }), peers: peers() }));
    expect(waiting.job).to.equal(null);
    expect(waiting.wakeAt).to.equal(NOW + 60_000);
    const due = decide(leaderInput({ now: NOW + 60_000, lockDeadline: NOW + 70_000, cluster: cluster('node1', { failover: failover('node1', 'node2', at) }), peers: peers() }));
    expect(due.job).to.equal('demote');
    const stale = decide(leaderInput({ now: NOW + 120_000, lockDeadline: NOW + 130_000, cluster: cluster('node1', { failover: failover('node1', 'node2', at) }) }));
    expect(types(stale)).to.include('clearFailover');
    // Maintenance mode keeps it without running it, even past its time; after a resume it runs when due or is dropped as stale.
    for (const now of [NOW, NOW + 60_000, NOW + 120_000]) {
      const paused = decide(leaderInput({ now, lockDeadline: now + 10_000, raw: { pause: true }, cluster: cluster('node1', { failover: failover('node1', 'node2', at) }), peers: peers() }));
      expect(types(paused)).to.not.include('clearFailover');
      expect(paused.job).to.equal(null);
      expect(paused.wakeAt).to.equal(null);
      expect(paused.message).to.include(`switchover scheduled at ${at} held while paused`);
    }
  });
});

describe('decide(): a leader whose promotion may still complete', () => {
  it('stops its server before it gives the key up (a switchover asked meanwhile, pause, nofailover)', () => {
    const fk = cluster('node1', { failover: failover('node1', null) });
    const asReplica = leaderInput({ cluster: fk, facts: replicaFacts(5000, null), promotionMayComplete: true });
    const d = decide(asReplica);
    expect(types(d)).to.deep.equal(['stop', 'disarmWatchdog', 'releaseLeader', 'remember', 'start']);
    expect(d.actions[0]).to.deep.equal({ type: 'stop', mode: 'immediate' });
    // Without a promotion in flight the key just goes back.
    expect(types(decide({ ...asReplica, promotionMayComplete: false }))).to.deep.equal(['releaseLeader']);
  });
});
