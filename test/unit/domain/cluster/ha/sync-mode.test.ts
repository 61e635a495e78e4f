import { expect } from 'chai';
import { EMPTY_MEMORY, type Action } from '../../../../../src/domain/cluster/ha/decision.js';
import { allOf, anyOf, quorumReached, standbyProgressStep, SYNC_STALL_MS, syncActions, syncStandbysLeftOut } from '../../../../../src/domain/cluster/ha/sync-mode.js';
import type { TagValue } from '../../../../../src/domain/cluster/model/node.js';
import { tickContext } from '../../../../../src/domain/cluster/ha/tick-context.js';
import { cluster, leaderInput, NOW, primaryFacts, row } from './fixtures.js';

type Sync = { leader: string; syncStandby: string[]; quorum: number };

function step(opts: { sync: Sync | null; ssn: string; rows: ReturnType<typeof row>[]; mode?: boolean | 'quorum'; strict?: boolean; count?: number; memoryLsn?: number }): Action[] {
  const raw = { synchronous_mode: opts.mode ?? true, synchronous_mode_strict: opts.strict ?? false, synchronous_node_count: opts.count ?? 1 };
  const memory = { ...EMPTY_MEMORY, ssn: opts.memoryLsn !== undefined ? { value: opts.ssn, lsn: opts.memoryLsn } : null };
  const input = leaderInput({
    raw,
    cluster: cluster('node1', { sync: opts.sync ? { ...opts.sync, revision: '3' } : null }),
    facts: primaryFacts(5000, { replication: opts.rows, synchronousStandbyNames: opts.ssn }),
    memory,
  });
  return syncActions(tickContext(input));
}

describe('synchronous replication steps (primary side)', () => {
  it('renders FIRST n / ANY k with quoted names', () => {
    expect(allOf(['node2', 'Node3'])).to.equal('FIRST 2 ("node2","Node3")');
    expect(anyOf(1, ['node2'])).to.equal('ANY 1 ("node2")');
  });

  it('takes over the key first (naming no standby) when it is missing or names another leader', () => {
    expect(step({ sync: null, ssn: '', rows: [row('node2', 5000)] })).to.deep.equal([{ type: 'writeSync', leader: 'node1', syncStandby: [], quorum: 0, ifRevision: '0' }]);
    expect(step({ sync: { leader: 'node9', syncStandby: ['node2'], quorum: 0 }, ssn: '', rows: [] })[0]).to.deep.include({ syncStandby: [], ifRevision: '3' });
  });

  it('writes the key again once promoted when it still holds what it replaced before the promotion', () => {
    const promoting = { timeline: 4, replaced: { leader: 'node9', syncStandby: ['node1'], quorum: 0 } };
    const input = leaderInput({ raw: { synchronous_mode: true }, cluster: cluster('node1', { sync: { leader: 'node1', syncStandby: [], quorum: 0, promoting, revision: '3' } }), facts: primaryFacts(5000, { replication: [], synchronousStandbyNames: '' }) });
    expect(syncActions(tickContext(input))).to.deep.equal([{ type: 'writeSync', leader: 'node1', syncStandby: [], quorum: 0, ifRevision: '3' }]);
  });

  it('adds a standby in two steps: ssn first, then the key once it confirmed everything', () => {
    const empty = { leader: 'node1', syncStandby: [], quorum: 0 };
    expect(step({ sync: empty, ssn: '', rows: [row('node2', 5000)] })).to.deep.equal([{ type: 'setSynchronousStandbyNames', value: 'FIRST 1 ("node2")' }]);
    // Not yet caught up with the position ssn was set at: wait.
    expect(step({ sync: empty, ssn: 'FIRST 1 ("node2")', rows: [row('node2', 4000)], memoryLsn: 4500 })).to.deep.equal([]);
    expect(step({ sync: empty, ssn: 'FIRST 1 ("node2")', rows: [row('node2', 4600)], memoryLsn: 4500 })).to.deep.equal([
      { type: 'writeSync', leader: 'node1', syncStandby: ['node2'], quorum: 0, ifRevision: '3' },
    ]);
  });

  it('replaces a lost standby: the key drops it first, then ssn names the new one', () => {
    const key = { leader: 'node1', syncStandby: ['node2'], quorum: 0 };
    expect(step({ sync: key, ssn: 'FIRST 1 ("node2")', rows: [row('node3', 5000)] })).to.deep.equal([
      { type: 'writeSync', leader: 'node1', syncStandby: [], quorum: 0, ifRevision: '3' },
      { type: 'setSynchronousStandbyNames', value: 'FIRST 1 ("node3")' },
    ]);
  });

  /** node2, the sync standby, confirmed up to `node2At` (ours: 5000); its WAL sender still shows it streaming, its member key says running but not answering. */
  const silentNode2 = (node2At: number) => {
    const key = { leader: 'node1', syncStandby: ['node2'], quorum: 0 };
    const members = cluster('node1').members.map((m) => (m.name === 'node2' ? { ...m, state: 'running', role: 'demoted' } : m));
    return leaderInput({
      raw: { synchronous_mode: true },
      cluster: cluster('node1', { members, sync: { ...key, revision: '3' } }),
      facts: primaryFacts(5000, { replication: [row('node2', node2At), row('node3', 5000)], synchronousStandbyNames: 'FIRST 1 ("node2")' }),
    });
  };

  it('a standby whose agent says its server does not answer (frozen) is replaced at once, not after wal_sender_timeout', () => {
    const input = silentNode2(4000);
    expect(syncActions(tickContext(input))).to.deep.equal([
      { type: 'writeSync', leader: 'node1', syncStandby: [], quorum: 0, ifRevision: '3' },
      { type: 'setSynchronousStandbyNames', value: 'FIRST 1 ("node3")' },
    ]);
    expect(syncStandbysLeftOut(tickContext(input))).to.deep.equal(['node2 is left out of the synchronous standbys: its server does not answer its agent and a commit waits for it']);
  });

  it('a silent standby that still confirms everything (one probe timed out) stays in the sync set', () => {
    expect(syncActions(tickContext(silentNode2(5000)))).to.deep.equal([]);
  });

  it('a standby whose confirmed position stands still behind ours (cut off by the network) is replaced after SYNC_STALL_MS, before ttl or wal_sender_timeout', () => {
    const key = { leader: 'node1', syncStandby: ['node2'], quorum: 0 };
    const at = (standbyProgress: Record<string, { position: number; behindSince: number | null }> | null, node2 = 4000) =>
      tickContext(leaderInput({
        raw: { synchronous_mode: true },
        cluster: cluster('node1', { sync: { ...key, revision: '3' } }),
        facts: primaryFacts(5000, { replication: [row('node2', node2), row('node3', 5000)], synchronousStandbyNames: 'FIRST 1 ("node2")' }),
        memory: { ...EMPTY_MEMORY, standbyProgress },
      }));
    // First seen behind: recorded, and the primary looks again when it would count as stalled.
    const first = at(null);
    expect(syncActions(first)).to.deep.equal([]);
    expect(standbyProgressStep(first).actions).to.deep.equal([{ type: 'remember', patch: { standbyProgress: { node2: { position: 4000, behindSince: NOW }, node3: { position: 5000, behindSince: null } } } }]);
    expect(standbyProgressStep(first).wakeAt).to.equal(NOW + SYNC_STALL_MS);
    // Still there, not yet long enough: nothing changes, and the record stands.
    const recorded = { node2: { position: 4000, behindSince: NOW - SYNC_STALL_MS + 1 }, node3: { position: 5000, behindSince: null } };
    expect(syncActions(at(recorded))).to.deep.equal([]);
    expect(standbyProgressStep(at(recorded)).actions).to.deep.equal([]);
    // Long enough: the key drops it first, then ssn names the other standby.
    const stalled = { ...recorded, node2: { position: 4000, behindSince: NOW - SYNC_STALL_MS } };
    expect(syncActions(at(stalled))).to.deep.equal([
      { type: 'writeSync', leader: 'node1', syncStandby: [], quorum: 0, ifRevision: '3' },
      { type: 'setSynchronousStandbyNames', value: 'FIRST 1 ("node3")' },
    ]);
    // The log says why, once (the key no longer names it after this tick).
    expect(syncStandbysLeftOut(at(stalled))).to.deep.equal(['node2 is left out of the synchronous standbys: it confirmed nothing for 5 s while commits wait']);
    expect(syncStandbysLeftOut(at(recorded))).to.deep.equal([]);
    // A stalled standby does not keep the loop spinning.
    expect(standbyProgressStep(at(stalled)).wakeAt).to.equal(null);
    // One that moved (a slow one) or caught up stays.
    expect(syncActions(at(stalled, 4500))).to.deep.equal([]);
    expect(syncActions(at(stalled, 5000))).to.deep.equal([]);
    expect(standbyProgressStep(at(stalled, 4500)).actions[0]).to.deep.include({ patch: { standbyProgress: { node2: { position: 4500, behindSince: NOW }, node3: { position: 5000, behindSince: null } } } });
    // Outside synchronous mode the record goes.
    const off = tickContext(leaderInput({ facts: primaryFacts(5000, { replication: [row('node2', 4000)] }), memory: { ...EMPTY_MEMORY, standbyProgress: recorded } }));
    expect(standbyProgressStep(off).actions).to.deep.equal([{ type: 'remember', patch: { standbyProgress: null } }]);
    expect(standbyProgressStep(off).wakeAt).to.equal(null);
  });

  it('maximum_lag_on_syncnode: a synchronous standby lagging further behind is replaced by one within it (the key drops it first); off by default and with -1', () => {
    const key = { leader: 'node1', syncStandby: ['node2'], quorum: 0 };
    const at = (raw: Record<string, unknown>) =>
      leaderInput({
        raw: { synchronous_mode: true, ...raw },
        cluster: cluster('node1', { sync: { ...key, revision: '3' } }),
        facts: primaryFacts(5000, { replication: [row('node2', 3000), row('node3', 4900)], synchronousStandbyNames: 'FIRST 1 ("node2")' }),
      });
    const limited = tickContext(at({ maximum_lag_on_syncnode: 1024 }));
    expect(syncActions(limited)).to.deep.equal([
      { type: 'writeSync', leader: 'node1', syncStandby: [], quorum: 0, ifRevision: '3' },
      { type: 'setSynchronousStandbyNames', value: 'FIRST 1 ("node3")' },
    ]);
    expect(syncStandbysLeftOut(limited)).to.deep.equal(['node2 is left out of the synchronous standbys: it lags 2000 bytes behind, more than maximum_lag_on_syncnode (1024)']);
    // Within the limit (a size string), with no limit, and with Patroni's -1: node2 stays.
    for (const raw of [{ maximum_lag_on_syncnode: '2kB' }, {}, { maximum_lag_on_syncnode: -1 }]) expect(syncActions(tickContext(at(raw))), JSON.stringify(raw)).to.deep.equal([]);
  });

  it('no standby left: empty key, then ssn empty (or * in strict mode)', () => {
    const key = { leader: 'node1', syncStandby: ['node2'], quorum: 0 };
    expect(step({ sync: key, ssn: 'FIRST 1 ("node2")', rows: [] }).map((a) => a.type)).to.deep.equal(['writeSync', 'setSynchronousStandbyNames']);
    expect(step({ sync: key, ssn: 'FIRST 1 ("node2")', rows: [], strict: true })[1]).to.deep.include({ value: '*' });
  });

  it('a steady state does nothing; nosync members are never picked', () => {
    const key = { leader: 'node1', syncStandby: ['node2'], quorum: 0 };
    expect(step({ sync: key, ssn: 'FIRST 1 ("node2")', rows: [row('node2', 5000), row('node3', 5000)] })).to.deep.equal([]);
    const members = cluster('node1').members.map((m) => (m.name === 'node3' ? { ...m, tags: { nosync: true } } : m));
    const input = leaderInput({
      raw: { synchronous_mode: true },
      cluster: cluster('node1', { members, sync: { leader: 'node1', syncStandby: [], quorum: 0, revision: '3' } }),
      facts: primaryFacts(5000, { replication: [row('node3', 5000), row('node2', 4000)] }),
    });
    expect(syncActions(tickContext(input))).to.deep.equal([{ type: 'setSynchronousStandbyNames', value: 'FIRST 1 ("node2")' }]);
  });

  it('a nofailover standby (or failover_priority 0) is picked last, even ahead and with a higher sync_priority', () => {
    const tagged = (tags2: Record<string, TagValue>) => cluster('node1').members.map((m) => (m.name === 'node2' ? { ...m, tags: tags2 } : m));
    const first = (tags2: Record<string, TagValue>, mode: true | 'quorum', count = 1, rows = [row('node2', 5000), row('node3', 4990)]) =>
      syncActions(
        tickContext(
          leaderInput({
            raw: { synchronous_mode: mode, synchronous_node_count: count },
            cluster: cluster('node1', { members: tagged(tags2), sync: { leader: 'node1', syncStandby: [], quorum: 0, revision: '3' } }),
            facts: primaryFacts(5000, { replication: rows }),
          }),
        ),
      );
    expect(first({ nofailover: true, sync_priority: 5 }, true)).to.deep.equal([{ type: 'setSynchronousStandbyNames', value: 'FIRST 1 ("node3")' }]);
    expect(first({ failover_priority: 0 }, true)).to.deep.equal([{ type: 'setSynchronousStandbyNames', value: 'FIRST 1 ("node3")' }]);
    // The only standby there is: better synchronous than none.
    expect(first({ nofailover: true }, true, 1, [row('node2', 5000)])).to.deep.equal([{ type: 'setSynchronousStandbyNames', value: 'FIRST 1 ("node2")' }]);
    // Quorum mode lists every candidate (those that may lead first): what one that may not lead confirmed alone is streamed from it before a promotion.
    expect(first({ nofailover: true }, 'quorum')).to.deep.equal([{ type: 'setSynchronousStandbyNames', value: 'FIRST 2 ("node3","node2")' }]);
  });

  it('quorum mode: all standbys in the key with k, then ssn ANY k', () => {
    const empty = { leader: 'node1', syncStandby: [], quorum: 0 };
    const rows = [row('node2', 5000), row('node3', 5000)];
    expect(step({ sync: empty, ssn: '', rows, mode: 'quorum' })).to.deep.equal([{ type: 'setSynchronousStandbyNames', value: 'FIRST 2 ("node2","node3")' }]);
    expect(step({ sync: empty, ssn: 'FIRST 2 ("node2","node3")', rows, mode: 'quorum', memoryLsn: 5000 })).to.deep.equal([
      { type: 'writeSync', leader: 'node1', syncStandby: ['node2', 'node3'], quorum: 1, ifRevision: '3' },
      { type: 'setSynchronousStandbyNames', value: 'ANY 1 ("node2","node3")' },
    ]);
  });

  it('quorum mode to synchronous mode: the quorum key is read as written, never shrunk into a priority key whose member may lack commits', () => {
    // Found by a fault audit on a real cluster: after the switch the primary wrote node2 alone
    // as a priority key while node3 alone had confirmed the last commits; node2 was promoted.
    const quorumKey = { leader: 'node1', syncStandby: ['node2', 'node3'], quorum: 1 };
    const rows = [row('node2', 4000), row('node3', 5000)];
    // The target (node3, the most advanced) under FIRST 1 keeps the quorum key safe: any 2 of its members include node3.
    expect(step({ sync: quorumKey, ssn: 'ANY 1 ("node2","node3")', rows, mode: true })).to.deep.equal([{ type: 'setSynchronousStandbyNames', value: 'FIRST 1 ("node3")' }]);
    // A target the key's safety does not cover: the key goes first (empty), it never names a member alone.
    const wrote = step({ sync: { ...quorumKey, syncStandby: ['node4', 'node5'] }, ssn: 'ANY 1 ("node4","node5")', rows, mode: true }).filter((a) => a.type === 'writeSync');
    expect(wrote).to.deep.equal([{ type: 'writeSync', leader: 'node1', syncStandby: [], quorum: 0, ifRevision: '3' }]);
    // Once the target confirmed everything under FIRST, the priority key names it.
    expect(step({ sync: quorumKey, ssn: 'FIRST 1 ("node3")', rows, mode: true, memoryLsn: 5000 })[0]).to.deep.equal({ type: 'writeSync', leader: 'node1', syncStandby: ['node3'], quorum: 0, ifRevision: '3' });
  });

  it('synchronous mode to quorum mode: a priority key whose members are not all in the new list goes before ssn relaxes', () => {
    const priorityKey = { leader: 'node1', syncStandby: ['node2'], quorum: 0 };
    const rows = [row('node3', 5000)];
    const acts = step({ sync: priorityKey, ssn: 'FIRST 1 ("node2")', rows, mode: 'quorum' });
    expect(acts[0]).to.deep.equal({ type: 'writeSync', leader: 'node1', syncStandby: [], quorum: 0, ifRevision: '3' });
  });

  it('a quorum key keeps its quorum rules in the race after the mode changed to true', () => {
    const sync = { leader: 'node0', syncStandby: ['node1', 'node2', 'node3'], quorum: 1, revision: '3' };
    const ctx = tickContext(leaderInput({ raw: { synchronous_mode: true }, cluster: cluster(null, { sync }) }));
    expect(quorumReached(ctx, ['node2'])).to.equal(false);
    expect(quorumReached(ctx, ['node2', 'node3'])).to.equal(true);
    // A priority key in quorum mode: each member holds every commit.
    const priority = tickContext(leaderInput({ raw: { synchronous_mode: 'quorum' }, cluster: cluster(null, { sync: { ...sync, quorum: 0 } }) }));
    expect(quorumReached(priority, [])).to.equal(true);
  });

  it('synchronous mode off: the key goes and ssn returns to the configured value', () => {
    const key = { leader: 'node1', syncStandby: ['node2'], quorum: 0 };
    expect(step({ sync: key, ssn: 'FIRST 1 ("node2")', rows: [], mode: false }).map((a) => a.type)).to.deep.equal(['deleteSync', 'setSynchronousStandbyNames']);
  });

  it('quorumReached: |L| - k + 1 members of the key must be visible (self included); the primary the key names always may', () => {
    const sync = { leader: 'node0', syncStandby: ['node1', 'node2', 'node3'], quorum: 1, revision: '3' };
    const ctx = tickContext(leaderInput({ raw: { synchronous_mode: 'quorum' }, cluster: cluster(null, { sync }) }));
    expect(quorumReached(ctx, ['node2'])).to.equal(false);
    expect(quorumReached(ctx, ['node2', 'node3'])).to.equal(true);
    const old = tickContext(leaderInput({ raw: { synchronous_mode: 'quorum' }, cluster: cluster(null, { sync: { ...sync, leader: 'node1', syncStandby: ['node2', 'node3'] } }) }));
    expect(quorumReached(old, [])).to.equal(true);
  });
});
