import { expect } from 'chai';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { InMemoryClusterStore } from '../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { InMemoryKeyValue, InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import { ClusterKey } from '../../../../src/adapters/cluster-store/keys.js';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { record } from '../../../contract/cluster-store-contract.js';

/** Lets every promise chain that can move on do so. */
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** Counts the key-value calls that cost etcd something. */
function counted(kv: InMemoryKeyValue): { readonly calls: Record<string, number> } {
  const calls: Record<string, number> = { readAllAt: 0, progress: 0, keepAlive: 0, put: 0, create: 0 };
  for (const name of Object.keys(calls) as (keyof InMemoryKeyValue & string)[]) {
    const original = (kv[name] as (...args: unknown[]) => unknown).bind(kv);
    (kv as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      calls[name]!++;
      return original(...args);
    };
  }
  return { calls };
}

describe('KeyValueClusterStore with a watched copy', () => {
  let clock: FakeClock;
  let space: InMemoryKeyValueSpace;
  let logger: MemoryLogger;
  let stores: InMemoryClusterStore[];
  const store = (id: string) => {
    const s = new InMemoryClusterStore(space, { clientId: id, logger, watchedCopy: true });
    stores.push(s);
    return s;
  };

  beforeEach(() => {
    clock = new FakeClock();
    space = new InMemoryKeyValueSpace(clock);
    logger = new MemoryLogger();
    stores = [];
  });
  afterEach(async () => {
    await Promise.all(stores.map((s) => s.close()));
  });

  it('reads the prefix once, then confirms the copy through the watch; other members\' writes show at once', async () => {
    const a = store('a');
    const b = store('b');
    const { calls } = counted(a.client);
    await a.read();
    expect(calls['readAllAt']).to.equal(1);
    for (let i = 0; i < 5; i++) {
      await b.writeConfig({ ttl: 30 + i }, undefined);
      expect((await a.read()).config!.value).to.deep.equal({ ttl: 30 + i });
    }
    expect(calls['readAllAt'], 'no range read after the first').to.equal(1);
    expect(calls['progress']).to.equal(5);
  });

  it('serves the last confirmed view again within maxAgeMs without asking etcd, unless this store wrote since', async () => {
    const a = store('a');
    const { calls } = counted(a.client);
    const first = await a.read();
    expect(await a.read({ maxAgeMs: 1000 })).to.equal(first);
    expect(calls['progress']).to.equal(0);
    await a.writeConfig({ ttl: 40 }, null);
    expect((await a.read({ maxAgeMs: 1000 })).config!.value).to.deep.equal({ ttl: 40 });
    expect(calls['progress']).to.equal(1);
  });

  it('after its watch missed changes (a partition), the next read is a full read and the watchers hear a resync', async () => {
    const a = store('a');
    const b = store('b');
    const changes: string[] = [];
    a.watch((c) => changes.push(c.kind));
    const { calls } = counted(a.client);
    await a.read();
    a.setReachable(false);
    await b.writeConfig({ ttl: 99 }, undefined);
    let failed = false;
    await a.read().catch(() => (failed = true));
    expect(failed, 'a read while cut off fails').to.equal(true);
    a.setReachable(true);
    await Promise.resolve();
    expect(changes).to.include('resync');
    expect((await a.read()).config!.value).to.deep.equal({ ttl: 99 });
    // The first read, the one that failed while cut off, the one after.
    expect(calls['readAllAt']).to.equal(3);
    expect(logger.messages('warn'), 'a watch that is down is no unanswered progress request').to.deep.equal([]);
  });

  it('a leader renews by keep-alive alone: one keep-alive per tick with its member record, no write', async () => {
    const a = store('a');
    await a.read();
    await a.publishMember('a', record(1), 30);
    expect(await a.acquireLeader('a', 30)).to.not.equal(null);
    await a.read();
    const { calls } = counted(a.client);
    const revision = space.currentRevision;
    for (let tick = 1; tick <= 3; tick++) {
      await clock.advance(2000);
      const before = clock.now();
      await a.read();
      await a.publishMember('a', record(1), 30);
      const lock = await a.renewLeader('a', 30);
      expect(lock!.deadline).to.equal(before + 30_000);
    }
    expect(calls['keepAlive']).to.equal(3);
    expect(calls['put'] + calls['create']).to.equal(0);
    expect(space.currentRevision, 'nothing written').to.equal(revision);
  });

  it('a leader\'s loop over a slow link: the renewal and the read share one confirmation, the member record the renewal\'s keep-alive', async () => {
    const a = store('a');
    await a.read();
    await a.publishMember('a', record(1), 20);
    expect(await a.acquireLeader('a', 20)).to.not.equal(null);
    await a.read();
    await clock.advance(2000);
    a.client.oneWayDelayMs = 1500;
    const { calls } = counted(a.client);
    const started = clock.now();
    const renewal = a.renewLeader('a', 20);
    const read = a.read();
    const [lock] = await Promise.all([renewal, read, clock.advance(3000)]);
    expect(lock!.deadline).to.equal(started + 20_000);
    expect(calls['progress'], 'one confirmation for the renewal and the read').to.equal(1);
    const publish = a.publishMember('a', record(2), 20);
    await Promise.all([publish, clock.advance(3000)]);
    expect(calls['keepAlive'], 'the member record rides on the renewal answered 3 s ago (a quarter ttl is 5 s)').to.equal(1);
    expect(clock.now() - started, 'two round trips in all').to.equal(6000);
  });

  it('a member without the lock renews its lease every quarter ttl, not every loop; its record stays', async () => {
    const b = store('b');
    await b.read();
    await b.publishMember('b', record(2), 20);
    const { calls } = counted(b.client);
    for (let tick = 1; tick <= 10; tick++) {
      await clock.advance(2000);
      space.expireLeases();
      await b.read();
      await b.publishMember('b', record(2), 20);
    }
    // At 6, 12 and 18 s: the first renewal at least 5 s after the one before.
    expect(calls['keepAlive']).to.equal(3);
    expect(calls['put']).to.equal(0);
    expect((await store('c').read()).members.map((m) => m.name)).to.deep.equal(['b']);
  });

  it('a lock whose key sits on a replaced lease is moved by compare-and-set', async () => {
    const a = store('a');
    await a.read();
    expect(await a.acquireLeader('a', 30)).to.not.equal(null);
    // A new TTL means a new lease: the key must follow it.
    const lock = await a.renewLeader('a', 31);
    expect(lock).to.not.equal(null);
    expect((await store('b').read()).leader?.name).to.equal('a');
    expect(space.peek(`${ClusterKey.leader}`)?.leased).to.equal(true);
    const leaderLease = (await a.client.readAll()).get(ClusterKey.leader)!.lease;
    expect(leaderLease).to.equal(a.client.currentLease());
  });

  it('unanswered progress requests: after three the copy reads in full for a minute and says so once', async () => {
    const a = store('a');
    await a.read();
    const { calls } = counted(a.client);
    let answer = false;
    const progress = a.client.progress.bind(a.client);
    a.client.progress = async () => (answer ? progress() : null);
    for (let i = 0; i < 3; i++) await a.read();
    expect(calls['readAllAt']).to.equal(3);
    await a.read();
    await a.read();
    expect(calls['readAllAt']).to.equal(5);
    expect(logger.messages('warn').filter((m) => /progress requests/.test(m))).to.have.length(1);
    answer = true;
    await clock.advance(60_000);
    await a.read();
    expect(calls['readAllAt'], 'confirmed again after the pause').to.equal(5);
    expect(logger.messages('info').some((m) => /again/.test(m))).to.equal(true);
  });

  /** Member a on a store whose progress answers overtake its watch reports (20 ms on their way), read once; b writes. */
  async function overtakingAnswers() {
    const a = store('a');
    const b = store('b');
    a.client.progressDistrusted = true;
    a.client.eventDelayMs = 20;
    await a.read();
    const { calls } = counted(a.client);
    for (const name of ['readChangedSince'] as const) {
      calls[name] = 0;
      const original = a.client[name].bind(a.client);
      a.client[name] = (...args) => {
        calls[name]!++;
        return original(...args);
      };
    }
    return { a, b, calls };
  }

  it('progress answers the store does not vouch for (an etcd that may send them ahead of changes) confirm the copy only where etcd has not moved; else the keys changed since are read', async () => {
    const { a, b, calls } = await overtakingAnswers();
    for (let i = 0; i < 3; i++) await a.read();
    expect([calls['progress'], calls['readChangedSince'], calls['readAllAt']], 'nothing changed: the answers confirm, no read').to.deep.equal([3, 0, 0]);
    expect(logger.messages('warn').filter((m) => /3\.4\.23|not trusted.*only while etcd's revision stands/.test(m))).to.have.length(1);
    for (let i = 0; i < 3; i++) {
      await b.writeConfig({ ttl: 40 + i }, undefined);
      // The change is still on its way to a's watch: the answer overtakes it, the changed keys bring it.
      expect((await a.read()).config!.value).to.deep.equal({ ttl: 40 + i });
      await clock.advance(20);
    }
    expect([calls['readChangedSince'], calls['readAllAt']], 'one changed-key read per change, no full read').to.deep.equal([3, 0]);
    await a.read();
    expect(calls['readChangedSince'], 'the reports arrived: the answer confirms again').to.equal(3);
    await b.acquireLeader('b', 30);
    expect((await a.read()).leader?.name).to.equal('b');
    await b.releaseLeader('b');
    // A deleted key is not among the changed ones, but etcd's key count shows one is gone: a full read.
    expect((await a.read()).leader).to.equal(null);
    expect([calls['readChangedSince'], calls['readAllAt']]).to.deep.equal([5, 1]);
  });

  it('with overtaking answers, a key created and deleted before a changed-key read never shows when its reports arrive late', async () => {
    const { a, b, calls } = await overtakingAnswers();
    const heard: string[] = [];
    a.watch((change) => heard.push(JSON.stringify(change)));
    await b.acquireLeader('b', 30);
    await b.releaseLeader('b');
    expect((await a.read()).leader).to.equal(null);
    expect([calls['readChangedSince'], calls['readAllAt']], 'nothing left changed, as many keys as before').to.deep.equal([1, 0]);
    await clock.advance(10);
    await settle();
    await clock.advance(10);
    await settle();
    expect(heard.filter((c) => /leader/.test(c) && /"b"/.test(c)), 'the late create is not taken in').to.deep.equal([]);
    expect((await a.read()).leader).to.equal(null);
    expect(calls['readAllAt']).to.equal(0);
  });

  it('with overtaking answers, a leader renews without a write and its loop\'s read shares the renewal\'s confirmation; trusted answers take over again', async () => {
    const { a, b, calls } = await overtakingAnswers();
    expect(await a.acquireLeader('a', 30)).to.not.equal(null);
    await a.read();
    await clock.advance(20);
    await b.writeConfig({ ttl: 50 }, undefined);
    const [puts, reads, changed] = [calls['put']!, calls['readAllAt']!, calls['readChangedSince']!];
    const renewal = a.renewLeader('a', 30);
    const loopRead = a.read();
    expect(await renewal, 'renewed without a write').to.not.equal(null);
    expect((await loopRead).config!.value).to.deep.equal({ ttl: 50 });
    expect([calls['put'], calls['readAllAt'], calls['readChangedSince']], 'one changed-key read serves both').to.deep.equal([puts, reads, changed + 1]);
    a.client.progressDistrusted = false;
    await clock.advance(2000);
    await b.writeConfig({ ttl: 51 }, undefined);
    const read = a.read();
    await settle();
    await clock.advance(20);
    expect((await read).config!.value).to.deep.equal({ ttl: 51 });
    expect([calls['readAllAt'], calls['readChangedSince']], 'a trusted answer waits for the reports').to.deep.equal([reads, changed + 1]);
    expect(logger.messages('info').some((m) => /trusted again/.test(m))).to.equal(true);
  });

  /**
   * Member a, cut off while b writes `ttl` and then back, so that its copy is not live until a
   * full read; every full read of a then waits until `release()`. `started()` counts them.
   */
  async function heldFullReads(ttl: number) {
    const a = store('a');
    const b = store('b');
    await a.read();
    a.setReachable(false);
    await b.writeConfig({ ttl }, undefined);
    a.setReachable(true);
    await settle();
    const original = a.client.readAllAt.bind(a.client);
    let started = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    a.client.readAllAt = async () => {
      started++;
      await gate;
      return original();
    };
    return { a, started: () => started, release };
  }

  it('while the copy cannot be confirmed (etcd down, the watch reconnecting), API readers content with a recent view share one full read instead of one each', async () => {
    const { a, started, release } = await heldFullReads(77);
    // A load balancer or dashboard polling GET /cluster ten times while etcd is slow to answer.
    const reads = Array.from({ length: 10 }, () => a.read({ maxAgeMs: 1000 }));
    await settle();
    expect(started(), 'one range read in flight, not one per request').to.equal(1);
    release();
    const views = await Promise.all(reads);
    for (const v of views) expect(v.config!.value).to.deep.equal({ ttl: 77 });
  });

  it('a reader that needs a view newer than the read in flight (the HA loop, or after its own write) does not join it', async () => {
    const { a, started, release } = await heldFullReads(78);
    const api = a.read({ maxAgeMs: 1000 });
    await settle();
    const loop = a.read();
    await settle();
    expect(started(), 'the loop reads for itself').to.equal(2);
    // Too old for a reader content with a second-old view once a second has passed.
    await clock.advance(1500);
    const late = a.read({ maxAgeMs: 1000 });
    await settle();
    expect(started(), 'a read begun over maxAgeMs ago is not joined').to.equal(3);
    release();
    await Promise.all([api, loop, late]);
  });

  it('a full read answered at a revision the watch has since passed is no sign that etcd went back', async () => {
    const a = store('a');
    const b = store('b');
    a.watch(() => undefined);
    await a.read();
    // Cut off while another member writes, then back: the next read is a full read.
    a.setReachable(false);
    await b.writeConfig({ ttl: 50 }, undefined);
    a.setReachable(true);
    await settle();
    const original = a.client.readAllAt.bind(a.client);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    a.client.readAllAt = async () => {
      // etcd serves the range now; its answer reaches the agent after the watch's next event.
      const answer = await original();
      await gate;
      return answer;
    };
    const reading = a.read();
    await settle();
    await b.writeConfig({ ttl: 51 }, undefined);
    await settle();
    release();
    await reading;
    expect(logger.messages('warn').filter((m) => /went back/.test(m)), 'no false alarm').to.deep.equal([]);
    a.client.readAllAt = original;
    expect((await a.read()).config!.value).to.deep.equal({ ttl: 51 });
  });
});
