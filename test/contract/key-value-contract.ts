import { expect } from 'chai';
import { DcsUnavailableError } from '../../src/domain/errors.js';
import type { KeyValueStore } from '../../src/adapters/cluster-store/key-value.js';
import { expectReportedByProgress } from '../support/progress-order.js';

/** What the contract needs from a DCS implementation under test. */
export interface KeyValueHarness {
  /** a new client (agent view) on the same store; each has its own lease */
  client(id: string): Promise<KeyValueStore>;
  /** let `ms` of lease time pass (fake clock advance, or real sleep for etcd) */
  elapse(ms: number): Promise<void>;
  /** make the whole store unreachable / reachable again (for etcd: stop/restart the server) */
  setStoreReachable(up: boolean): Promise<void>;
  /** ttl to use in lease tests, seconds (etcd tests use 2-3 s; fake uses 30) */
  readonly ttlSeconds: number;
  /** Upper bound (real ms) for a call to fail while the store is down; default 10 000 (the default retry_timeout). */
  readonly unavailableBoundMs?: number;
  cleanup(): Promise<void>;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * How long past its TTL a lease may take to expire: etcd revokes on its own schedule (a check
 * every 500 ms, each revocation a raft proposal), and on a loaded two-core machine that has
 * been seen to take over 7 s. Only a failing run waits this long.
 */
const EXPIRY_SLACK_MS = 15_000;

/**
 * Retries `check` (in real time) until it returns true or `timeoutMs` passes. A fake store
 * satisfies checks at the first try; a real one may need a moment (lease expiry runs on
 * etcd's own schedule, watch events travel over the network).
 */
async function eventually(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
      lastError = undefined;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() >= deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}${lastError ? ` (last error: ${String(lastError)})` : ''}`);
    }
    await realSleep(25);
  }
}

/** Records the keys a watch reports. */
function recorder(dcs: KeyValueStore): { readonly seen: string[]; readonly off: () => void } {
  const seen: string[] = [];
  const off = dcs.watch((key) => seen.push(key));
  return { seen, off };
}

/**
 * Writes a probe key until the watch reports it: a real watch is established
 * asynchronously, and events written before that may not be delivered.
 */
async function untilWatchSees(writer: KeyValueStore, seen: readonly string[], probeKey: string, timeoutMs = 10000): Promise<void> {
  let n = 0;
  await eventually(
    `watch to report ${probeKey}`,
    async () => {
      if (seen.includes(probeKey)) return true;
      await writer.put(probeKey, String(n++));
      for (let i = 0; i < 10 && !seen.includes(probeKey); i++) await realSleep(i === 0 ? 0 : 10);
      return seen.includes(probeKey);
    },
    timeoutMs,
  );
}

/** Expects `p` to reject with DcsUnavailableError within `boundMs` of real time. */
async function rejectsUnavailable(what: string, p: () => Promise<unknown>, boundMs: number): Promise<void> {
  const started = Date.now();
  let error: unknown;
  try {
    await p();
  } catch (e) {
    error = e;
  }
  const took = Date.now() - started;
  expect(error, `${what} should reject while the store is down`).to.be.instanceOf(DcsUnavailableError);
  expect((error as DcsUnavailableError).code).to.equal('dcs_unavailable');
  expect(took, `${what} took ${took} ms to fail`).to.be.lessThan(boundMs);
}

/**
 * The behaviour every `KeyValueStore` adapter must have (etcd semantics), written once and run
 * against each implementation. Uses only the harness, so it holds for a fake clock and
 * for a real server alike.
 */
export function keyValueContract(name: string, harness: () => Promise<KeyValueHarness>): void {
  describe(`KeyValueStore contract: ${name}`, function () {
    let h: KeyValueHarness;
    let ttlMs: number;

    beforeEach(async function () {
      h = await harness();
      ttlMs = h.ttlSeconds * 1000;
      // Lease tests wait a few TTLs of real time against a real server.
      this.currentTest?.timeout(Math.max(10000, ttlMs * 4 + 30000));
    });

    afterEach(async () => {
      await h.cleanup();
    });

    describe('reads', () => {
      it('readAll of an empty prefix is an empty map', async () => {
        const a = await h.client('a');
        const all = await a.readAll();
        expect(all.size).to.equal(0);
      });

      it('readAll returns every key by its relative name with a string revision', async () => {
        const a = await h.client('a');
        expect(await a.put('config', '{"ttl":30}')).to.equal(true);
        expect(await a.put('members/node1', '{"role":"replica"}')).to.equal(true);
        const all = await a.readAll();
        expect([...all.keys()].sort()).to.deep.equal(['config', 'members/node1']);
        expect(all.get('members/node1')!.value).to.equal('{"role":"replica"}');
        expect(all.get('config')!.revision).to.be.a('string').and.not.equal('0');
      });

      it('another client sees the same keys', async () => {
        const a = await h.client('a');
        const b = await h.client('b');
        await a.put('initialize', '7312345678901234567');
        expect((await b.readAll()).get('initialize')?.value).to.equal('7312345678901234567');
      });
    });

    describe('create', () => {
      it('creates only when absent, and answers the revision of the key it created', async () => {
        const a = await h.client('a');
        await a.put('config', '{}');
        const revision = await a.create('initialize', 'sys1');
        expect(revision).to.be.a('string');
        expect(await a.create('initialize', 'sys2')).to.equal(null);
        const created = (await a.readAll()).get('initialize');
        expect(created?.value).to.equal('sys1');
        expect(created?.revision).to.equal(revision);
        expect(await a.create('leader', 'a'), 'a later create, a later revision').to.satisfy((r: string) => BigInt(r) > BigInt(revision!));
      });

      it('is atomic: two clients racing for the same key, exactly one wins', async () => {
        const a = await h.client('a');
        const b = await h.client('b');
        await a.keepAlive(h.ttlSeconds);
        await b.keepAlive(h.ttlSeconds);
        const [wa, wb] = await Promise.all([a.create('leader', 'a', { leased: true }), b.create('leader', 'b', { leased: true })]);
        expect([wa, wb].filter(Boolean)).to.have.length(1);
        const winner = wa ? 'a' : 'b';
        expect((await a.readAll()).get('leader')?.value).to.equal(winner);
      });

      it('many concurrent creates of one key: exactly one wins', async () => {
        const clients = await Promise.all(['a', 'b', 'c', 'd', 'e'].map((id) => h.client(id)));
        const results = await Promise.all(clients.map((c, i) => c.create('initialize', `sys${i}`)));
        expect(results.filter(Boolean)).to.have.length(1);
      });
    });

    describe('put with a revision condition (compare-and-set)', () => {
      it('succeeds on the current revision and fails on a stale one', async () => {
        const a = await h.client('a');
        const b = await h.client('b');
        await a.put('config', 'v1');
        const r1 = (await a.readAll()).get('config')!.revision;
        expect(await a.put('config', 'v2', { if: { revision: r1 } })).to.equal(true);
        const r2 = (await a.readAll()).get('config')!.revision;
        expect(r2).to.not.equal(r1);
        expect(await b.put('config', 'v3', { if: { revision: r1 } }), 'stale revision').to.equal(false);
        expect((await b.readAll()).get('config')?.value).to.equal('v2');
        expect(await b.put('config', 'v3', { if: { revision: r2 } })).to.equal(true);
      });

      it("revision '0' means only if absent", async () => {
        const a = await h.client('a');
        expect(await a.put('failover', '{"member":"b"}', { if: { revision: '0' } })).to.equal(true);
        expect(await a.put('failover', '{"member":"c"}', { if: { revision: '0' } })).to.equal(false);
        expect((await a.readAll()).get('failover')?.value).to.equal('{"member":"b"}');
      });

      it('a revision condition on an absent key fails', async () => {
        const a = await h.client('a');
        await a.put('sync', 'x');
        const rev = (await a.readAll()).get('sync')!.revision;
        expect(await a.delete('sync')).to.equal(true);
        expect(await a.put('sync', 'y', { if: { revision: rev } })).to.equal(false);
        expect((await a.readAll()).has('sync')).to.equal(false);
      });

      it('an unconditional put always writes and bumps the revision', async () => {
        const a = await h.client('a');
        await a.put('status', '1');
        const r1 = (await a.readAll()).get('status')!.revision;
        expect(await a.put('status', '1')).to.equal(true);
        expect((await a.readAll()).get('status')!.revision).to.not.equal(r1);
      });
    });

    describe('value conditions (leader refresh and release)', () => {
      it('the holder refreshes its leader key; another member cannot', async () => {
        const a = await h.client('a');
        const b = await h.client('b');
        await a.keepAlive(h.ttlSeconds);
        await b.keepAlive(h.ttlSeconds);
        expect(await a.create('leader', 'a', { leased: true })).to.be.a('string');
        expect(await a.put('leader', 'a', { leased: true, if: { value: 'a' } })).to.equal(true);
        expect(await b.put('leader', 'b', { leased: true, if: { value: 'b' } })).to.equal(false);
        expect((await b.readAll()).get('leader')?.value).to.equal('a');
      });

      it('a value condition on an absent key fails (a lost leader cannot refresh)', async () => {
        const a = await h.client('a');
        await a.keepAlive(h.ttlSeconds);
        expect(await a.put('leader', 'a', { leased: true, if: { value: 'a' } })).to.equal(false);
        expect((await a.readAll()).has('leader')).to.equal(false);
      });

      it('revision and value conditions must both hold', async () => {
        const a = await h.client('a');
        await a.put('leader', 'a');
        const rev = (await a.readAll()).get('leader')!.revision;
        expect(await a.put('leader', 'b', { if: { revision: rev, value: 'x' } })).to.equal(false);
        expect(await a.put('leader', 'b', { if: { revision: '999999', value: 'a' } })).to.equal(false);
        expect(await a.put('leader', 'b', { if: { revision: rev, value: 'a' } })).to.equal(true);
      });

      it('delete with a value condition releases only our own key', async () => {
        const a = await h.client('a');
        const b = await h.client('b');
        await a.keepAlive(h.ttlSeconds);
        await a.create('leader', 'a', { leased: true });
        expect(await b.delete('leader', { value: 'b' })).to.equal(false);
        expect((await b.readAll()).get('leader')?.value).to.equal('a');
        expect(await a.delete('leader', { value: 'a' })).to.equal(true);
        expect((await b.readAll()).has('leader')).to.equal(false);
      });

      it('delete with a revision condition; delete of an absent key is false', async () => {
        const a = await h.client('a');
        await a.put('failover', '{}');
        const rev = (await a.readAll()).get('failover')!.revision;
        await a.put('failover', '{"member":"b"}');
        expect(await a.delete('failover', { revision: rev })).to.equal(false);
        const rev2 = (await a.readAll()).get('failover')!.revision;
        expect(await a.delete('failover', { revision: rev2 })).to.equal(true);
        expect(await a.delete('failover')).to.equal(false);
      });
    });

    describe('leases', () => {
      it('keepAlive is false when it creates a lease, true when it renews it, false for another TTL', async () => {
        const a = await h.client('a');
        expect(await a.keepAlive(h.ttlSeconds)).to.equal(false);
        expect(await a.keepAlive(h.ttlSeconds)).to.equal(true);
        expect(await a.keepAlive(h.ttlSeconds + 1)).to.equal(false);
        expect(await a.keepAlive(h.ttlSeconds + 1)).to.equal(true);
      });

      it('a leased key disappears after ttl without keepAlive; unleased keys stay', async () => {
        const a = await h.client('a');
        const b = await h.client('b');
        await a.keepAlive(h.ttlSeconds);
        await a.create('leader', 'a', { leased: true });
        await a.put('members/a', '{}', { leased: true });
        await a.put('config', '{}');
        await h.elapse(ttlMs);
        await eventually('leased keys to expire', async () => !(await b.readAll()).has('leader'), ttlMs + EXPIRY_SLACK_MS);
        const all = await b.readAll();
        expect(all.has('members/a')).to.equal(false);
        expect(all.get('config')?.value).to.equal('{}');
      });

      it('a leased key stays while keepAlive renews the lease', async () => {
        const a = await h.client('a');
        const b = await h.client('b');
        await a.keepAlive(h.ttlSeconds);
        await a.create('leader', 'a', { leased: true });
        for (let i = 0; i < 4; i++) {
          await h.elapse(Math.floor(ttlMs / 3));
          expect(await a.keepAlive(h.ttlSeconds), `renewal ${i}`).to.equal(true);
        }
        // Four thirds of a TTL have passed since the key was written.
        expect((await b.readAll()).get('leader')?.value).to.equal('a');
      });

      it('keepAlive after expiry returns false, and new leased writes work', async () => {
        const a = await h.client('a');
        const b = await h.client('b');
        await a.keepAlive(h.ttlSeconds);
        await a.create('leader', 'a', { leased: true });
        await h.elapse(ttlMs);
        await eventually('the leader key to expire', async () => !(await b.readAll()).has('leader'), ttlMs + EXPIRY_SLACK_MS);
        expect(await a.keepAlive(h.ttlSeconds)).to.equal(false);
        expect(await a.create('leader', 'a', { leased: true })).to.be.a('string');
        expect(await a.keepAlive(h.ttlSeconds)).to.equal(true);
        expect((await b.readAll()).get('leader')?.value).to.equal('a');
      });

      it("one client's expiry does not touch another client's leased keys", async () => {
        const a = await h.client('a');
        const b = await h.client('b');
        await a.keepAlive(h.ttlSeconds);
        await b.keepAlive(h.ttlSeconds);
        await a.put('members/a', '{}', { leased: true });
        await b.put('members/b', '{}', { leased: true });
        for (let i = 0; i < 4; i++) {
          await h.elapse(Math.floor(ttlMs / 3));
          await b.keepAlive(h.ttlSeconds);
        }
        await eventually('members/a to expire', async () => !(await b.readAll()).has('members/a'), ttlMs + EXPIRY_SLACK_MS);
        expect((await b.readAll()).has('members/b')).to.equal(true);
      });

      it('a plain put detaches a key from the lease', async () => {
        const a = await h.client('a');
        await a.keepAlive(h.ttlSeconds);
        await a.put('members/a', '{"x":1}', { leased: true });
        await a.put('members/a', '{"x":2}');
        await a.revokeLease();
        expect((await a.readAll()).get('members/a')?.value).to.equal('{"x":2}');
      });

      it('revokeLease drops leased keys at once and keeps the others', async () => {
        const a = await h.client('a');
        const b = await h.client('b');
        await a.keepAlive(h.ttlSeconds);
        await b.keepAlive(h.ttlSeconds);
        await a.create('leader', 'a', { leased: true });
        await a.put('members/a', '{}', { leased: true });
        await b.put('members/b', '{}', { leased: true });
        await a.put('config', '{}');
        await a.revokeLease();
        const all = await b.readAll();
        expect(all.has('leader')).to.equal(false);
        expect(all.has('members/a')).to.equal(false);
        expect(all.has('members/b')).to.equal(true);
        expect(all.has('config')).to.equal(true);
        expect(await a.keepAlive(h.ttlSeconds), 'a new lease after a revoke').to.equal(false);
      });
    });

    describe('watch', () => {
      it('reports puts and deletes by relative key', async () => {
        const a = await h.client('a');
        const b = await h.client('b');
        const w = recorder(b);
        await untilWatchSees(a, w.seen, 'probe');
        await a.put('members/a', '{}');
        await eventually('put event', () => w.seen.includes('members/a'));
        await a.put('config', '{}');
        await a.delete('config');
        await eventually('delete event', () => w.seen.filter((k) => k === 'config').length >= 2);
        w.off();
      });

      it('reports keys removed by lease expiry', async () => {
        const a = await h.client('a');
        const b = await h.client('b');
        const w = recorder(b);
        await untilWatchSees(b, w.seen, 'probe');
        await a.keepAlive(h.ttlSeconds);
        await a.create('leader', 'a', { leased: true });
        await eventually('create event', () => w.seen.includes('leader'));
        w.seen.length = 0;
        await h.elapse(ttlMs);
        await eventually('expiry event for the leader key', () => w.seen.includes('leader'), ttlMs + EXPIRY_SLACK_MS);
        w.off();
      });

      it('reports keys removed by revokeLease', async () => {
        const a = await h.client('a');
        const b = await h.client('b');
        const w = recorder(b);
        await untilWatchSees(b, w.seen, 'probe');
        await a.keepAlive(h.ttlSeconds);
        await a.put('members/a', '{}', { leased: true });
        await eventually('put event', () => w.seen.includes('members/a'));
        w.seen.length = 0;
        await a.revokeLease();
        await eventually('revoke event', () => w.seen.includes('members/a'));
        w.off();
      });

      it('a failed conditional write reports nothing', async () => {
        const a = await h.client('a');
        const w = recorder(a);
        await untilWatchSees(a, w.seen, 'probe');
        await a.put('leader', 'a');
        await eventually('put event', () => w.seen.includes('leader'));
        w.seen.length = 0;
        expect(await a.create('leader', 'b')).to.equal(null);
        expect(await a.put('leader', 'b', { if: { value: 'b' } })).to.equal(false);
        await a.put('probe2', 'x');
        await eventually('a later event', () => w.seen.includes('probe2'));
        expect(w.seen).to.not.include('leader');
        w.off();
      });

      it('unsubscribe stops the listener; other watchers keep receiving', async () => {
        const a = await h.client('a');
        const w1 = recorder(a);
        const w2 = recorder(a);
        await untilWatchSees(a, w1.seen, 'probe');
        await untilWatchSees(a, w2.seen, 'probe');
        w1.off();
        w1.seen.length = 0;
        await a.put('members/x', '{}');
        await eventually('the remaining watcher to see it', () => w2.seen.includes('members/x'));
        await realSleep(100);
        expect(w1.seen).to.deep.equal([]);
        w2.off();
      });
    });

    describe('revisions, leases and watch progress', () => {
      it('readAllAt gives the revision of the read; writtenRevision follows this client\'s writes', async () => {
        const a = await h.client('a');
        expect(a.writtenRevision()).to.equal('0');
        await a.put('config', '{}');
        const afterPut = a.writtenRevision();
        const read = await a.readAllAt();
        expect(BigInt(read.revision) >= BigInt(afterPut)).to.equal(true);
        expect(read.entries.get('config')!.revision).to.equal(afterPut);
        expect(await a.create('config', '{}')).to.equal(null);
        expect(BigInt(a.writtenRevision()) >= BigInt(afterPut)).to.equal(true);
        await a.delete('config');
        expect(BigInt(a.writtenRevision()) > BigInt(afterPut)).to.equal(true);
      });

      it('readChangedSince gives the keys changed after a revision, with their lease, and how many keys the prefix holds', async () => {
        const a = await h.client('a');
        await a.put('config', '{"ttl":30}');
        await a.put('members/a', '{}');
        const before = await a.readAllAt();
        const unchanged = await a.readChangedSince(before.revision);
        expect([unchanged.changed.size, unchanged.count]).to.deep.equal([0, before.entries.size]);
        expect(BigInt(unchanged.revision) >= BigInt(before.revision)).to.equal(true);
        await a.keepAlive(h.ttlSeconds);
        await a.put('members/a', '{"n":1}', { leased: true });
        await a.delete('config');
        const after = await a.readChangedSince(before.revision);
        expect([...after.changed.keys()]).to.deep.equal(['members/a']);
        const entry = after.changed.get('members/a')!;
        expect([entry.value, entry.lease]).to.deep.equal(['{"n":1}', a.currentLease()]);
        // The delete shows only in the count.
        expect(after.count).to.equal(before.entries.size - 1);
        expect(BigInt(after.revision) >= BigInt(a.writtenRevision())).to.equal(true);
        const since = await a.readChangedSince(entry.revision);
        expect([since.changed.size, since.count]).to.deep.equal([0, after.count]);
      });

      it('currentLease is null before the first keepAlive; reads and events name the lease of a leased key', async () => {
        const a = await h.client('a');
        const b = await h.client('b');
        expect(a.currentLease()).to.equal(null);
        const infos: [string, string | null, string, string | null][] = [];
        const keys: string[] = [];
        const off = b.watch((key, value, info) => {
          keys.push(key);
          infos.push([key, value, info.revision, info.lease]);
        });
        try {
          await untilWatchSees(a, keys, 'probe');
          await a.keepAlive(h.ttlSeconds);
          const lease = a.currentLease();
          expect(lease).to.be.a('string').and.match(/^[0-9]+$/);
          await a.put('members/a', '{}', { leased: true });
          const leasedRevision = a.writtenRevision();
          await a.put('config', '{}');
          const plainRevision = a.writtenRevision();
          await a.delete('config');
          await eventually('three events', () => infos.filter(([k]) => k === 'members/a' || k === 'config').length >= 3);
          const mine = infos.filter(([k]) => k === 'members/a' || k === 'config');
          expect(mine).to.deep.equal([
            ['members/a', '{}', leasedRevision, lease],
            ['config', '{}', plainRevision, null],
            ['config', null, a.writtenRevision(), null],
          ]);
          const all = await b.readAll();
          expect(all.get('members/a')!.lease).to.equal(lease);
        } finally {
          off();
        }
      });

      it('progress is null without a live watch; watching() says whether every watch is live', async () => {
        const a = await h.client('a');
        expect(a.watching()).to.equal(false);
        expect(await a.whenWatching(100)).to.equal(false);
        expect(await a.progress()).to.equal(null);
        const w = recorder(a);
        expect(await a.whenWatching(5000)).to.equal(true);
        await untilWatchSees(a, w.seen, 'probe');
        expect(a.watching()).to.equal(true);
        w.off();
        expect(a.watching()).to.equal(false);
        expect(await a.progress()).to.equal(null);
      });

      it('progress answers after every change up to its revision was reported, another client\'s writes included', async () => {
        const a = await h.client('a');
        const b = await h.client('b');
        const w = recorder(b);
        try {
          await untilWatchSees(b, w.seen, 'probe');
          for (let i = 0; i < 5; i++) {
            await a.put(`members/m${i}`, String(i));
            const revision = await b.progress();
            expect(revision, 'progress of a live watch').to.be.a('string');
            expect(BigInt(revision!) >= BigInt(a.writtenRevision())).to.equal(true);
            await expectReportedByProgress(b, w.seen, `members/m${i}`);
          }
        } finally {
          w.off();
        }
      });

      it('progress of a client with two watches waits for both', async () => {
        const a = await h.client('a');
        const w1 = recorder(a);
        const w2 = recorder(a);
        try {
          await untilWatchSees(a, w1.seen, 'probe');
          await untilWatchSees(a, w2.seen, 'probe');
          await a.put('config', '{"n":1}');
          expect(await a.progress()).to.be.a('string');
          await expectReportedByProgress(a, w1.seen, 'config');
          await expectReportedByProgress(a, w2.seen, 'config');
        } finally {
          w1.off();
          w2.off();
        }
      });
    });

    describe('unreachable store', () => {
      it('every call rejects with DcsUnavailableError within a bounded time, then works again after recovery', async function () {
        const bound = h.unavailableBoundMs ?? 10000;
        this.timeout(Math.max(60000, bound * 3 + 60000));
        const a = await h.client('a');
        const b = await h.client('b');
        await a.keepAlive(h.ttlSeconds);
        await a.put('config', '{}');
        const w = recorder(b);
        await untilWatchSees(a, w.seen, 'probe');

        await h.setStoreReachable(false);
        const unsubscribeWhileDown = b.watch(() => {});
        await Promise.all([
          rejectsUnavailable('readAll', () => a.readAll(), bound),
          rejectsUnavailable('keepAlive', () => a.keepAlive(h.ttlSeconds), bound),
          rejectsUnavailable('create', () => a.create('initialize', 'x'), bound),
          rejectsUnavailable('put', () => a.put('config', '{"x":1}'), bound),
          rejectsUnavailable('conditional put', () => a.put('config', '{"x":1}', { if: { revision: '1' } }), bound),
          rejectsUnavailable('delete', () => a.delete('config'), bound),
          rejectsUnavailable('revokeLease', () => a.revokeLease(), bound),
        ]);
        unsubscribeWhileDown();

        await h.setStoreReachable(true);
        await eventually('calls to work again', async () => (await a.readAll()).get('config')?.value === '{}', 30000);
        expect(await a.put('config', '{"back":true}')).to.equal(true);
        w.seen.length = 0;
        await untilWatchSees(a, w.seen, 'after-recovery', 30000);
        await b.keepAlive(h.ttlSeconds);
        expect(await b.create('leader', 'b', { leased: true })).to.be.a('string');
        w.off();
      });
    });

    describe('close', () => {
      it('close never throws and stops the watch', async () => {
        const a = await h.client('a');
        const b = await h.client('b');
        const w = recorder(b);
        await untilWatchSees(a, w.seen, 'probe');
        await b.close();
        w.seen.length = 0;
        await a.put('members/a', '{}');
        await realSleep(150);
        expect(w.seen).to.deep.equal([]);
        await b.close();
      });
    });
  });
}
