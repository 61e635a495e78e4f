import { expect } from 'chai';
import type { MemberRecord } from '../../src/ports/cluster-store.js';
import { DcsUnavailableError } from '../../src/domain/errors.js';
import type { ClusterChange, ClusterStore } from '../../src/ports/cluster-store.js';

/** What the contract needs from a ClusterStore implementation under test. */
export interface ClusterStoreHarness {
  /** A new agent's store on the same cluster; each has its own lease. */
  client(id: string): Promise<ClusterStore>;
  /** Lets `ms` of lease time pass (fake clock advance, or real sleep for etcd). */
  elapse(ms: number): Promise<void>;
  /** The current time of the store's clock (epoch ms). */
  now(): number;
  /** Makes the whole store unreachable / reachable again. */
  setStoreReachable(up: boolean): Promise<void>;
  /** Lease ttl for the tests, seconds. */
  readonly ttlSeconds: number;
  /** The stores read from a watched copy: they renew the lock by keep-alive alone and skip unchanged writes. */
  readonly watchedCopy?: boolean;
  cleanup(): Promise<void>;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Retries `check` in real time until it holds (a real store applies leases and watches on its own schedule). */
async function eventually(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // try again
    }
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await realSleep(25);
  }
}

/** A member record with every field set. */
export function record(n: number, extra: Partial<MemberRecord> = {}): MemberRecord {
  return {
    connUrl: `postgres://127.0.0.1:${15431 + n}/postgres`,
    apiUrl: `http://127.0.0.1:${8007 + n}`,
    state: 'running',
    role: 'replica',
    version: '0.1.0',
    xlogLocation: 0x4000060,
    receiveLsn: 0x4000060,
    replayLsn: 0x4000000,
    replicationState: 'streaming',
    timeline: 2,
    tags: { nofailover: false, zone: 'a' },
    pendingRestart: true,
    pendingRestartReason: { max_connections: { old_value: '100', new_value: '200' } },
    scheduledRestart: { schedule: '2030-01-01T00:00:00Z', role: 'replica' },
    ...extra,
  };
}

/**
 * The behaviour every ClusterStore must show, run against the in-memory store (fake clock)
 * and against etcd (real time): the leader lock and its deadline, member records on the
 * agent's lease, compare-and-set writes, the watch, and reading one's own writes.
 */
export function clusterStoreContract(name: string, makeHarness: () => Promise<ClusterStoreHarness>): void {
  describe(`ClusterStore contract: ${name}`, function () {
    this.timeout(30_000);
    let h: ClusterStoreHarness;
    let a: ClusterStore;
    let b: ClusterStore;

    beforeEach(async () => {
      h = await makeHarness();
      a = await h.client('a');
      b = await h.client('b');
    });
    afterEach(async () => {
      await h.cleanup();
    });

    it('an empty cluster reads as nothing', async () => {
      const c = await a.read();
      expect([c.initialize, c.config, c.leader, c.failover, c.failoverRevision, c.sync, c.history, c.status, c.failsafe]).to.deep.equal([
        null, null, null, null, null, null, null, null, null,
      ]);
      expect(c.members).to.deep.equal([]);
    });

    it('the leader lock: one holder at a time, a deadline one ttl from before the request, renewed only by its holder', async () => {
      const before = h.now();
      const lock = await a.acquireLeader('a', h.ttlSeconds);
      expect(lock).to.not.equal(null);
      expect(lock!.deadline).to.be.within(before + h.ttlSeconds * 1000, h.now() + h.ttlSeconds * 1000);
      expect(await b.acquireLeader('b', h.ttlSeconds)).to.equal(null);
      expect((await b.read()).leader?.name).to.equal('a');
      expect(await b.renewLeader('b', h.ttlSeconds)).to.equal(null);
      const renewed = await a.renewLeader('a', h.ttlSeconds);
      expect(renewed!.deadline).to.be.at.least(lock!.deadline);
      expect(await b.releaseLeader('b')).to.equal(false);
      expect(await a.releaseLeader('a')).to.equal(true);
      expect((await a.read()).leader).to.equal(null);
      expect(await b.acquireLeader('b', h.ttlSeconds)).to.not.equal(null);
      expect(await a.renewLeader('a', h.ttlSeconds)).to.equal(null);
    });

    it('a holder that stops renewing loses the lock and its member record after ttl; another member then takes it', async () => {
      await a.publishMember('a', record(1), h.ttlSeconds);
      expect(await a.acquireLeader('a', h.ttlSeconds)).to.not.equal(null);
      await b.publishMember('b', record(2), h.ttlSeconds);
      await h.elapse(h.ttlSeconds * 1000 + 500);
      await eventually('the lock and member a to expire', async () => {
        await b.publishMember('b', record(2), h.ttlSeconds);
        const c = await b.read();
        return c.leader === null && c.members.map((m) => m.name).join() === 'b';
      });
      expect(await b.acquireLeader('b', h.ttlSeconds)).to.not.equal(null);
      expect(await a.renewLeader('a', h.ttlSeconds)).to.equal(null);
    });

    it('a member record reads back field for field; an unchanged record is not written again', async () => {
      await a.publishMember('a', record(1), h.ttlSeconds);
      const first = (await b.read()).members[0]!;
      expect(first).to.deep.include({ name: 'a', ...record(1) });
      await a.read();
      await a.publishMember('a', record(1), h.ttlSeconds);
      expect((await b.read()).members[0]!.revision).to.equal(first.revision);
      await a.publishMember('a', record(1, { state: 'stopped', role: 'demoted' }), h.ttlSeconds);
      const second = (await b.read()).members[0]!;
      expect([second.state, second.role]).to.deep.equal(['stopped', 'demoted']);
      expect(second.revision).to.not.equal(first.revision);
    });

    it('leave() removes the member record and the lock at once', async () => {
      await a.publishMember('a', record(1), h.ttlSeconds);
      await a.acquireLeader('a', h.ttlSeconds);
      await a.leave();
      await eventually('a gone', async () => {
        const c = await b.read();
        return c.leader === null && c.members.length === 0;
      });
    });

    it('initialize: one claim wins; the winner completes it; an incomplete claim can be abandoned, a complete one cannot', async () => {
      const first = await a.claimInitialize();
      expect(first).to.be.a('string');
      expect(await b.claimInitialize()).to.equal(null);
      const claimed = await b.read();
      expect(claimed.initialize).to.equal('');
      expect(claimed.initializeRevision, 'the claim answers the revision readers see').to.equal(first);
      expect(await b.abandonInitialize('999999')).to.equal(false);
      expect(await b.abandonInitialize(first!)).to.equal(true);
      const second = await b.claimInitialize();
      expect(second).to.be.a('string');
      expect(await a.abandonInitialize(first!), 'the first claim is gone: the second, of another revision, stays').to.equal(false);
      expect((await a.read()).initialize).to.equal('');
      expect(await b.completeInitialize('7300000000000000001')).to.equal(true);
      expect((await a.read()).initialize).to.equal('7300000000000000001');
      // Only an empty claim is completed: never a registered cluster's key, nor a missing one.
      expect(await a.completeInitialize('7300000000000000009')).to.equal(false);
      expect((await a.read()).initialize).to.equal('7300000000000000001');
      expect(await a.abandonInitialize(second!), 'completed since').to.equal(false);
      expect(await a.claimInitialize()).to.equal(null);
    });

    it('initialize: a member holding data registers its system identifier in one create, which fails when the key exists', async () => {
      expect(await a.claimInitialize('7300000000000000002')).to.be.a('string');
      const registered = await b.read();
      expect(registered.initialize).to.equal('7300000000000000002');
      expect(await b.claimInitialize('7300000000000000003')).to.equal(null);
      expect(await b.claimInitialize()).to.equal(null);
      expect(await b.abandonInitialize(registered.initializeRevision!), 'a registered key is complete').to.equal(false);
    });

    it('initialize: a member holding data replaces an abandoned claim of a known revision in one write, and nothing else', async () => {
      expect(await a.claimInitialize()).to.be.a('string');
      const claimed = await b.read();
      expect(await b.replaceInitialize('7300000000000000004', '999999'), 'another revision').to.equal(false);
      expect(await b.replaceInitialize('7300000000000000004', claimed.initializeRevision!)).to.equal(true);
      const replaced = await a.read();
      expect(replaced.initialize).to.equal('7300000000000000004');
      expect(await a.replaceInitialize('7300000000000000005', claimed.initializeRevision!), 'the claim it replaced is gone').to.equal(false);
      expect(await a.abandonInitialize(replaced.initializeRevision!), 'a registered key is complete').to.equal(false);
      expect((await b.read()).initialize).to.equal('7300000000000000004');
    });

    it('configuration: compare-and-set on the revision (null: only when absent; undefined: always)', async () => {
      expect(await a.writeConfig({ ttl: 30 }, null)).to.equal(true);
      expect(await b.writeConfig({ ttl: 40 }, null)).to.equal(false);
      const stored = (await b.read()).config!;
      expect(stored.value).to.deep.equal({ ttl: 30 });
      expect(await b.writeConfig({ ttl: 40 }, stored.revision)).to.equal(true);
      expect(await a.writeConfig({ ttl: 50 }, stored.revision)).to.equal(false);
      expect(await a.writeConfig({ ttl: 60, db: { parameters: { max_connections: 200 } } }, undefined)).to.equal(true);
      expect((await b.read()).config!.value).to.deep.equal({ ttl: 60, db: { parameters: { max_connections: 200 } } });
    });

    it('a failover request round-trips; a cancelled one reads as none but keeps a revision for the next compare-and-set', async () => {
      expect(await a.writeFailover({ leader: 'a', member: 'b', scheduledAt: '2030-01-01T00:00:00Z' }, null)).to.equal(true);
      const c = await b.read();
      expect(c.failover).to.deep.include({ leader: 'a', member: 'b', scheduledAt: '2030-01-01T00:00:00Z' });
      expect(await b.writeFailover(null, c.failover!.revision)).to.equal(true);
      const cancelled = await a.read();
      expect(cancelled.failover).to.equal(null);
      expect(cancelled.failoverRevision).to.not.equal(null);
      expect(await a.writeFailover({ leader: null, member: 'b', scheduledAt: null }, c.failover!.revision)).to.equal(false);
      expect(await a.writeFailover({ leader: null, member: 'b', scheduledAt: null }, cancelled.failoverRevision)).to.equal(true);
    });

    it('sync, history, status and failsafe round-trip; sync is compare-and-set and can be cleared', async () => {
      expect(await a.writeSync({ leader: 'a', syncStandby: ['b', 'c'], quorum: 1 }, null)).to.equal(true);
      const sync = (await b.read()).sync!;
      expect(sync).to.deep.include({ leader: 'a', syncStandby: ['b', 'c'], quorum: 1 });
      expect(await b.writeSync({ leader: 'a', syncStandby: ['b'], quorum: 0 }, '424242')).to.equal(false);
      expect(await b.writeSync({ leader: 'a', syncStandby: ['b'], quorum: 0 }, sync.revision)).to.equal(true);
      await a.writeHistory([[1, 0x3000000, 'no recovery target specified', '2030-01-01T00:00:00.000Z', 'a']]);
      await a.writeStatus({ optime: 0x4000060, slots: { b: 0x4000000 } });
      await a.writeFailsafe({ a: 'http://127.0.0.1:8008', b: 'http://127.0.0.1:8009' });
      const c = await b.read();
      expect(c.history!.lines).to.deep.equal([[1, 0x3000000, 'no recovery target specified', '2030-01-01T00:00:00.000Z', 'a']]);
      expect(c.status).to.deep.include({ optime: 0x4000060, slots: { b: 0x4000000 } });
      expect(c.failsafe).to.deep.equal({ a: 'http://127.0.0.1:8008', b: 'http://127.0.0.1:8009' });
      await b.clearSync();
      expect((await a.read()).sync).to.equal(null);
    });

    it('the watch reports who holds the lock and what changed', async () => {
      const seen: ClusterChange[] = [];
      const off = b.watch((c) => seen.push(c));
      try {
        // A real watch is established asynchronously: write until the first event arrives.
        await eventually('the watch to report', async () => {
          await a.writeStatus({ optime: 1, slots: {} });
          return seen.some((c) => c.kind === 'status');
        });
        await a.acquireLeader('a', h.ttlSeconds);
        await a.writeFailover({ leader: 'a', member: 'b', scheduledAt: null }, undefined);
        await a.writeConfig({ ttl: 30 }, undefined);
        await a.publishMember('a', record(1), h.ttlSeconds);
        await a.releaseLeader('a');
        await eventually('every change to be reported', () => {
          const kinds = seen.map((c) => (c.kind === 'leader' ? `leader:${c.holder}` : c.kind === 'member' ? `member:${c.name}` : c.kind));
          return ['leader:a', 'failover', 'config', 'member:a', 'leader:null'].every((k) => kinds.includes(k));
        });
      } finally {
        off();
      }
    });

    it('a recent view may be served again, but never after this store wrote (a node reads its own writes)', async () => {
      await a.writeConfig({ ttl: 30 }, null);
      const first = await a.read({ maxAgeMs: 60_000 });
      expect(await a.read({ maxAgeMs: 60_000 })).to.equal(first);
      await a.writeConfig({ ttl: 40 }, first.config!.revision);
      expect((await a.read({ maxAgeMs: 60_000 })).config!.value).to.deep.equal({ ttl: 40 });
      expect(a.lastRead()!.cluster.config!.value).to.deep.equal({ ttl: 40 });
      expect((await a.read()).config!.value).to.deep.equal({ ttl: 40 });
    });

    it('a store with a watched copy renews the lock by keep-alive alone, and still sees at once that another member deleted it', async function () {
      if (!h.watchedCopy) this.skip();
      await a.read();
      const lock = await a.acquireLeader('a', h.ttlSeconds);
      expect(lock).to.not.equal(null);
      // The copy must have taken the new key in before a renewal can skip the write.
      await eventually('a to see its own key', async () => (await a.read()).leader?.name === 'a');
      const taken = (await b.read()).leader!.revision;
      for (let i = 0; i < 3; i++) {
        const before = h.now();
        const renewed = await a.renewLeader('a', h.ttlSeconds);
        expect(renewed, `renewal ${i}`).to.not.equal(null);
        expect(renewed!.deadline).to.be.within(before - 1000 + h.ttlSeconds * 1000, h.now() + h.ttlSeconds * 1000);
      }
      expect((await b.read()).leader!.revision, 'the leader key was not written again').to.equal(taken);
      // Another process releasing the key in a's name (the fencer does): the very next renewal fails.
      expect(await b.releaseLeader('a')).to.equal(true);
      expect(await a.renewLeader('a', h.ttlSeconds)).to.equal(null);
      expect(await b.acquireLeader('b', h.ttlSeconds)).to.not.equal(null);
      expect(await a.renewLeader('a', h.ttlSeconds)).to.equal(null);
    });

    it('a store with a watched copy does not write a status, failsafe or history value that is already stored', async function () {
      if (!h.watchedCopy) this.skip();
      await a.read();
      await a.writeStatus({ optime: 100, slots: {} });
      await a.writeFailsafe({ a: 'http://127.0.0.1:8008' });
      await a.writeHistory([[1, 0x3000000, 'no recovery target specified', '2030-01-01T00:00:00.000Z', 'a']]);
      await a.read();
      const first = await b.read();
      await a.writeStatus({ optime: 100, slots: {} });
      await a.writeFailsafe({ a: 'http://127.0.0.1:8008' });
      await a.writeHistory([[1, 0x3000000, 'no recovery target specified', '2030-01-01T00:00:00.000Z', 'a']]);
      const second = await b.read();
      expect([second.status!.revision, second.history!.revision]).to.deep.equal([first.status!.revision, first.history!.revision]);
      await a.writeStatus({ optime: 200, slots: {} });
      const third = await b.read();
      expect(third.status!.optime).to.equal(200);
      expect(third.status!.revision).to.not.equal(first.status!.revision);
    });

    it('every read shows what other members wrote before it began', async () => {
      await a.read();
      for (let i = 0; i < 5; i++) {
        await b.writeConfig({ ttl: 30 + i }, undefined);
        expect((await a.read()).config!.value).to.deep.equal({ ttl: 30 + i });
        await b.publishMember('b', record(2, { xlogLocation: i }), h.ttlSeconds);
        expect((await a.read()).members.find((m) => m.name === 'b')?.xlogLocation).to.equal(i);
      }
    });

    it('removeCluster deletes everything of the cluster', async () => {
      await a.claimInitialize();
      await a.writeConfig({ ttl: 30 }, null);
      await a.publishMember('a', record(1), h.ttlSeconds);
      await a.acquireLeader('a', h.ttlSeconds);
      expect(await b.removeCluster()).to.be.at.least(4);
      const c = await a.read();
      expect([c.initialize, c.config, c.leader, c.members.length]).to.deep.equal([null, null, null, 0]);
    });

    it('an unreachable store fails every call with DcsUnavailableError', async () => {
      await h.setStoreReachable(false);
      try {
        for (const call of [() => a.read(), () => a.acquireLeader('a', h.ttlSeconds), () => a.writeConfig({}, undefined), () => a.publishMember('a', record(1), h.ttlSeconds)]) {
          let error: unknown;
          try {
            await call();
          } catch (e) {
            error = e;
          }
          expect(error).to.be.instanceOf(DcsUnavailableError);
        }
      } finally {
        await h.setStoreReachable(true);
      }
    });
  });
}
