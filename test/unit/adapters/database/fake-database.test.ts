import { expect } from 'chai';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { FakeDatabase, FakeDatabaseNetwork } from '../../../../src/adapters/database/fake-database.js';
import { parseSyncNames } from '../../../../src/adapters/database/fake-sync-names.js';
import { walPosition } from '../../../../src/domain/cluster/model/facts.js';
import { DatabaseError } from '../../../../src/domain/errors.js';
import type { Upstream } from '../../../../src/ports/database.js';

const T = 10000;

async function rejection(p: Promise<unknown>): Promise<DatabaseError> {
  try {
    await p;
  } catch (e) {
    expect(e).to.be.instanceOf(DatabaseError);
    return e as DatabaseError;
  }
  throw new Error('expected a rejection');
}

describe('FakeDatabase', () => {
  let clock: FakeClock;
  let net: FakeDatabaseNetwork;
  const make = (name: string) => new FakeDatabase({ name, connUrl: `postgres://${name}:5432/postgres`, network: net, clock });
  const up = (db: FakeDatabase): Upstream => ({ name: db.name, connUrl: db.connUrl });

  /** A running primary `a` and running streaming replicas of it. */
  async function cluster(...replicaNames: string[]): Promise<[FakeDatabase, ...FakeDatabase[]]> {
    const a = make('a');
    await a.initdb();
    await a.start({ upstream: null, timeoutMs: T });
    const replicas: FakeDatabase[] = [];
    for (const n of replicaNames) {
      const r = make(n);
      await r.createReplica(up(a));
      await r.start({ upstream: up(a), timeoutMs: T });
      replicas.push(r);
    }
    return [a, ...replicas];
  }

  beforeEach(() => {
    clock = new FakeClock(Date.UTC(2024, 0, 1));
    net = new FakeDatabaseNetwork();
  });

  describe('lifecycle', () => {
    it('an empty data directory probes as stopped and uninitialized', async () => {
      const f = await make('a').probe();
      expect(f).to.deep.include({ state: 'stopped', initialized: false, running: false, inRecovery: null, timeline: null });
    });

    it('initdb creates a cluster on timeline 1; start makes a writable primary', async () => {
      const a = make('a');
      await a.initdb();
      expect(a.state).to.equal('stopped');
      expect((await a.probe()).initialized).to.equal(true);
      await a.start({ upstream: null, timeoutMs: T });
      const f = await a.probe();
      expect(f).to.deep.include({ state: 'running', running: true, inRecovery: false, timeline: 1, serverVersion: 150018 });
      expect(f.walLocation).to.be.a('number');
      expect(f.systemIdentifier).to.match(/^\d{19}$/);
      expect(f.postmasterStartTime).to.equal('2024-01-01T00:00:00.000+00:00');
      expect(a.isWritable).to.equal(true);
    });

    it('a fast or immediate stop in progress takes no commit (PostgreSQL refuses connections and ends the sessions at once); a smart one does', async () => {
      for (const mode of ['fast', 'immediate', 'smart'] as const) {
        const [a] = await cluster();
        a.setDelay('stop', 5000);
        const stopping = a.stop(mode);
        await clock.advance(100);
        expect(a.state).to.equal('stopping');
        expect(a.isWritable, mode).to.equal(mode === 'smart');
        if (mode !== 'smart') {
          let error = '';
          await a.write().catch((e: Error) => (error = e.message));
          expect(error).to.match(/shutting down/);
        }
        await clock.advance(5000);
        await stopping;
        expect(a.isWritable).to.equal(false);
        net = new FakeDatabaseNetwork();
      }
    });

    it('works alone, on a network of its own', async () => {
      const solo = new FakeDatabase({ name: 'solo', connUrl: 'postgres://solo:5432/postgres', clock });
      await solo.initdb();
      await solo.start({ upstream: null, timeoutMs: T });
      await solo.write();
      expect(solo.network.acknowledgedWrites).to.have.length(1);
    });

    it('initdb refuses a non-empty data directory (data_dir_not_empty: nothing to remove)', async () => {
      const a = make('a');
      await a.initdb();
      expect((await rejection(a.initdb())).code).to.equal('data_dir_not_empty');
    });

    it('start without data fails with start_failed', async () => {
      const a = make('a');
      expect((await rejection(a.start({ upstream: null, timeoutMs: T }))).code).to.equal('start_failed');
      expect(a.state).to.equal('start_failed');
    });

    it('write advances the LSN and is refused on a replica or a stopped server', async () => {
      const [a, b] = await cluster('b');
      const before = a.lsn!;
      const lsn = await a.write(1000);
      expect(lsn).to.equal(before + 1000);
      expect((await a.probe()).walLocation).to.equal(lsn);
      expect((await rejection(b.write())).message).to.contain('read-only');
      await a.stop('fast');
      expect((await rejection(a.write())).code).to.equal('write_failed');
    });

    it('stop and start keep the data; stop of a stopped server is a no-op', async () => {
      const [a] = await cluster();
      const lsn = await a.write();
      await a.stop('fast');
      expect(a.state).to.equal('stopped');
      expect((await a.probe()).running).to.equal(false);
      await a.stop('fast');
      await a.start({ upstream: null, timeoutMs: T });
      expect(a.lsn).to.equal(lsn);
    });

    it('crash: state crashed, not running, WAL kept; start recovers it', async () => {
      const [a] = await cluster();
      const lsn = await a.write();
      a.crash();
      const f = await a.probe();
      expect(f).to.deep.include({ state: 'crashed', running: false, initialized: true });
      await a.start({ upstream: null, timeoutMs: T });
      expect(a.state).to.equal('running');
      expect(a.lsn).to.equal(lsn);
    });

    it('restart keeps the role and clears a pending restart', async () => {
      const [a, b] = await cluster('b');
      await a.configure({ shared_buffers: '256MB', work_mem: '8MB' });
      let f = await a.probe();
      expect(f.pendingRestart).to.equal(true);
      expect(f.pendingRestartReason).to.deep.equal({ shared_buffers: { old_value: '128MB', new_value: '256MB' } });
      await a.restart(T);
      f = await a.probe();
      expect(f).to.deep.include({ state: 'running', inRecovery: false, pendingRestart: false });
      await b.restart(T);
      expect((await b.probe()).inRecovery).to.equal(true);
    });

    it("the fencer's hold: a start no agent decided comes up read-only; the agent's next start sets the role and lifts it; the data stays a primary's", async () => {
      const [a] = await cluster();
      await a.write();
      a.setDelay('start', 3000);
      a.crash();
      // pg_ctl start was sent an instant before the agent died; the fencer holds the data read-only.
      const starting = a.start({ upstream: null, timeoutMs: T });
      a.agentDied();
      a.holdReadOnly();
      await clock.advance(3000);
      await starting;
      expect(await a.probe()).to.deep.include({ running: true, inRecovery: true });
      expect(a.isWritable).to.equal(false);
      await a.stop('fast');
      expect((await a.probe()).stoppedAsReplica, "a held primary's data").to.equal(false);
      const again = a.start({ upstream: null, timeoutMs: T });
      await clock.advance(3000);
      await again;
      expect(a.isWritable).to.equal(true);
      expect(a.fenceHeld).to.equal(false);
    });

    it('a restart whose stop the fencer overtakes (frozen agent) does not start the server; one whose agent died never starts it', async () => {
      const [a] = await cluster();
      a.setDelay('stop', 5000);
      const restart = rejection(a.restart(T));
      await clock.advance(1000);
      a.holdReadOnly();
      a.crash();
      await clock.advance(5000);
      expect((await restart).code).to.equal('restart_failed');
      expect(a.isRunning).to.equal(false);
      // Decided again after the hold: the agent's restart or start lifts it.
      await a.start({ upstream: null, timeoutMs: T });
      expect(a.isWritable).to.equal(true);
      const second = rejection(a.restart(T));
      await clock.advance(1000);
      a.agentDied();
      await clock.advance(5000);
      expect((await second).message).to.match(/agent died/);
      expect(a.isRunning).to.equal(false);
      expect(a.state).to.equal('stopped');
    });

    it('a changed reloadable parameter needs no restart; boolean postmaster values read on/off', async () => {
      const [a] = await cluster();
      await a.configure({ work_mem: '64MB' });
      expect((await a.probe()).pendingRestart).to.equal(false);
      await a.configure({ wal_log_hints: true });
      expect((await a.probe()).pendingRestartReason).to.deep.equal({ wal_log_hints: { old_value: 'off', new_value: 'on' } });
    });

    it('removeDataDirectory needs a stopped server and empties it', async () => {
      const [a] = await cluster();
      expect((await rejection(a.removeDataDirectory())).code).to.equal('remove_data_failed');
      await a.stop('fast');
      await a.removeDataDirectory();
      expect(a.isInitialized).to.equal(false);
      expect(await a.timelineHistory()).to.deep.equal([]);
    });

    it('reload and checkpoint need a running server', async () => {
      const a = make('a');
      await a.initdb();
      expect((await rejection(a.reload())).code).to.equal('reload_failed');
      expect((await rejection(a.checkpoint())).code).to.equal('checkpoint_failed');
      await a.start({ upstream: null, timeoutMs: T });
      await a.reload();
      await a.checkpoint();
    });
  });

  describe('streaming replication', () => {
    it('createReplica copies system id, timeline and WAL; the replica starts streaming', async () => {
      const [a, b] = await cluster('b');
      expect(b.systemIdentifier).to.equal(a.systemIdentifier);
      const f = await b.probe();
      expect(f).to.deep.include({ inRecovery: true, replicationState: 'streaming', timeline: 1, upstreamConnUrl: a.connUrl });
      expect(f.receivedLocation).to.equal(a.lsn);
      expect(f.walLocation).to.equal(null);
    });

    it('createReplica needs an empty data directory and a running source', async () => {
      const [a] = await cluster();
      const b = make('b');
      await a.stop('fast');
      expect((await rejection(b.createReplica(up(a)))).code).to.equal('create_replica_source_unreachable');
      expect(b.isInitialized).to.equal(false);
      await a.start({ upstream: null, timeoutMs: T });
      await b.createReplica(up(a));
      expect((await rejection(b.createReplica(up(a)))).message).to.contain('not empty');
    });

    it('a replica catches up on its probe and on network.replicate()', async () => {
      const [a, b] = await cluster('b');
      const lsn = await a.write(500);
      expect(b.lsn).to.be.lessThan(lsn);
      expect((await b.probe()).receivedLocation).to.equal(lsn);
      const lsn2 = await a.write(500);
      net.replicate();
      expect(b.lsn).to.equal(lsn2);
      expect(b.replayedLsn).to.equal(lsn2);
    });

    it('the primary lists its streaming standbys', async () => {
      const [a] = await cluster('b', 'c');
      const rows = (await a.probe()).replication;
      expect(rows.map((r) => [r.application_name, r.state, r.sync_state])).to.deep.equal([
        ['b', 'streaming', 'async'],
        ['c', 'streaming', 'async'],
      ]);
    });

    it('cascading: a replica of a replica receives through it', async () => {
      const [a, b] = await cluster('b');
      const c = make('c');
      await c.createReplica(up(b));
      await c.start({ upstream: up(b), timeoutMs: T });
      const lsn = await a.write();
      net.replicate();
      expect(c.lsn).to.equal(lsn);
      expect(c.isStreaming).to.equal(true);
    });

    it('paused replication lags while staying connected; resuming catches up', async () => {
      const [a, b] = await cluster('b');
      b.setReplicationPaused(true);
      const lsn = await a.write(4096);
      const f = await b.probe();
      expect(f.replicationState).to.equal('streaming');
      expect(lsn - walPosition(f)!).to.equal(4096);
      b.setReplicationPaused(false);
      expect((await b.probe()).receivedLocation).to.equal(lsn);
    });

    it('an injected lag keeps the replica that many bytes behind', async () => {
      const [a, b] = await cluster('b');
      b.setReplicationLag(1000);
      for (let i = 0; i < 10; i++) await a.write(300);
      await b.probe();
      expect(a.lsn! - b.lsn!).to.be.at.least(1000).and.lessThan(1300);
    });

    it('paused replay: received advances, replayed does not', async () => {
      const [a, b] = await cluster('b');
      b.setReplayPaused(true);
      const before = b.replayedLsn;
      const lsn = await a.write();
      const f = await b.probe();
      expect(f).to.deep.include({ receivedLocation: lsn, replayedLocation: before, replayPaused: true });
      b.setReplayPaused(false);
      expect((await b.probe()).replayedLocation).to.equal(lsn);
    });

    it('a replica without a reachable upstream is in recovery but not streaming', async () => {
      const [a, b] = await cluster('b');
      a.crash();
      const f = await b.probe();
      expect(f).to.deep.include({ inRecovery: true, replicationState: null });
    });

    it('a server cut off from the others (network.setCutOff): no WAL, base backup or rewind crosses the cut; linked again, it streams', async () => {
      const [a, b, c] = await cluster('b', 'c');
      await a.setSynchronousStandbyNames('b');
      net.setCutOff(b.connUrl, true);
      expect(net.isCutOff(b.connUrl)).to.equal(true);
      let acked: number | null = null;
      void a.write().then((lsn) => (acked = lsn));
      net.replicate();
      await clock.advance(1000);
      // The synchronous standby receives nothing and drops out of the primary's list; the commit waits.
      expect(acked).to.equal(null);
      expect((await b.probe())).to.deep.include({ inRecovery: true, replicationState: null });
      expect((await a.probe()).replication.map((r) => r.application_name)).to.deep.equal(['c']);
      expect(c.lsn).to.equal(a.lsn);
      const d = make('d');
      net.setCutOff(d.connUrl, true);
      expect((await rejection(d.createReplica(up(a)))).message).to.contain('not reachable');
      net.setCutOff(d.connUrl, false);
      net.setCutOff(b.connUrl, false);
      net.replicate();
      expect(b.lsn).to.equal(a.lsn);
      expect(a.acknowledgedWrites).to.have.length(1);
      await clock.advance(0);
      expect(acked).to.equal(a.lsn);
    });

    it('a standby started with no upstream waits in recovery', async () => {
      const [a] = await cluster();
      await a.stop('fast');
      await a.start({ upstream: null, standby: true, timeoutMs: T });
      expect((await a.probe())).to.deep.include({ inRecovery: true, upstreamConnUrl: null, replicationState: null });
    });
  });

  describe('promotion, divergence and rewind', () => {
    it('promote increments the timeline, records history and makes the replica writable', async () => {
      const [a, b] = await cluster('b');
      const switchLsn = await a.write();
      await b.probe();
      a.crash();
      await b.promote(T);
      expect(b.isWritable).to.equal(true);
      expect(b.timeline).to.equal(2);
      expect(await b.timelineHistory()).to.deep.equal([[1, switchLsn, 'no recovery target specified', null, null]]);
      const f = await b.probe();
      expect(f).to.deep.include({ inRecovery: false, timeline: 2, upstreamConnUrl: null });
      expect(f.walLocation).to.be.greaterThan(switchLsn);
    });

    it("shutdownCheckpoint: a primary's end of WAL after a clean stop; null after an immediate stop, a crash, for a replica or a running server", async () => {
      const [a, b] = await cluster('b');
      const last = await a.write();
      expect(await a.shutdownCheckpoint()).to.equal(null);
      await a.stop('fast');
      expect(await a.shutdownCheckpoint()).to.equal(last);
      await b.stop('fast');
      expect(await b.shutdownCheckpoint()).to.equal(null);
      await a.start({ upstream: null, timeoutMs: T });
      expect(await a.shutdownCheckpoint()).to.equal(null);
      await a.stop('immediate');
      expect(await a.shutdownCheckpoint()).to.equal(null);
      await a.start({ upstream: null, timeoutMs: T });
      a.crash();
      expect(await a.shutdownCheckpoint()).to.equal(null);
    });

    it('promote with walAtLeast: pulls what its upstream has first; one still behind waits catchUpMs, then promotes anyway', async () => {
      const [a, b] = await cluster('b');
      b.setReplicationPaused(true);
      const last = await a.write();
      expect(b.lsn).to.be.lessThan(last);
      b.setReplicationPaused(false);
      await b.promote(T, { walAtLeast: last, catchUpMs: 2000 });
      expect(b.lsn).to.be.greaterThan(last);
      expect(b.timeline).to.equal(2);
      // Its upstream gone with WAL it never received: the wait runs out and the promotion goes ahead.
      const d = make('d');
      await d.createReplica(up(b));
      await d.start({ upstream: up(b), timeoutMs: T });
      d.setReplicationPaused(true);
      const lost = await b.write();
      b.crash();
      const started = clock.now();
      const p = d.promote(T, { walAtLeast: lost, catchUpMs: 2000 });
      await clock.advance(2000);
      await p;
      expect(clock.now() - started).to.equal(2000);
      expect(d.isWritable).to.equal(true);
      expect(d.lastPromoteOptions).to.deep.equal({ walAtLeast: lost, catchUpMs: 2000 });
    });

    it('promote on a primary fails with promote_failed', async () => {
      const [a] = await cluster();
      expect((await rejection(a.promote(T))).code).to.equal('promote_failed');
    });

    it('a cleanly stopped former primary follows the new one without rewind', async () => {
      const [a, b] = await cluster('b');
      await a.write();
      await a.stop('fast'); // walsenders hand over all WAL before shutdown
      await b.promote(T);
      await a.follow(up(b), { timeoutMs: T });
      const f = await a.probe();
      expect(f).to.deep.include({ inRecovery: true, replicationState: 'streaming', timeline: 2 });
      expect(a.isDiverged).to.equal(false);
      expect(await a.timelineHistory()).to.have.length(1);
    });

    it('a crashed primary with unreplicated writes diverges: follow leaves it not streaming, rewind fixes it', async () => {
      const [a, b] = await cluster('b');
      await a.write();
      await b.probe();
      b.setReplicationPaused(true);
      await a.write(); // never reaches b
      a.crash();
      await b.promote(T);
      const after = await b.write();
      await a.follow(up(b), { timeoutMs: T });
      let f = await a.probe();
      expect(f).to.deep.include({ inRecovery: true, replicationState: null, timeline: 1 });
      expect(a.isDiverged).to.equal(true);
      expect(b.timeline).to.equal(2);

      expect((await rejection(a.rewind(up(b)))).message).to.contain('shut down');
      await a.stop('fast');
      await a.rewind(up(b));
      await a.start({ upstream: up(b), timeoutMs: T });
      f = await a.probe();
      expect(f).to.deep.include({ replicationState: 'streaming', timeline: 2, receivedLocation: after });
      expect(a.isDiverged).to.equal(false);
    });

    it('a demoted node that had been promoted (its own timeline) must rewind', async () => {
      const [a, b] = await cluster('b');
      await a.stop('fast');
      await b.promote(T); // b on timeline 2
      await a.start({ upstream: null, timeoutMs: T }); // a still on timeline 1, writable
      await a.stop('fast');
      await a.start({ upstream: null, standby: true, timeoutMs: T });
      await a.promote(T); // a jumps to its own timeline 2 branch
      await a.follow(up(b), { timeoutMs: T });
      expect((await a.probe()).replicationState).to.equal(null);
      expect(a.isDiverged).to.equal(true);
    });

    it('a rewind whose source goes away on the way leaves the directory half rewritten: never started or rewound again, a fresh copy replaces it', async () => {
      const [a, b] = await cluster('b');
      await a.write();
      b.setReplicationPaused(true);
      await a.write();
      a.crash();
      await b.promote(T);
      a.setDelay('rewind', 2000);
      const rewinding = rejection(a.rewind(up(b)));
      await clock.advance(1000);
      b.crash();
      await clock.advance(1000);
      expect((await rewinding).code).to.equal('rewind_interrupted');
      await b.start({ upstream: null, timeoutMs: T });
      expect((await rejection(a.rewind(up(b)))).code).to.equal('rewind_interrupted');
      expect((await rejection(a.start({ upstream: up(b), timeoutMs: T }))).message).to.contain('must be reinitialized');
      expect(a.state).to.equal('start_failed');
      await a.removeDataDirectory();
      await a.createReplica(up(b));
      await a.start({ upstream: up(b), timeoutMs: T });
      expect((await a.probe()).replicationState).to.equal('streaming');
    });

    it('rewind refuses a source of another system', async () => {
      const [a] = await cluster();
      const x = make('x');
      await x.initdb();
      await x.start({ upstream: null, timeoutMs: T });
      await a.stop('fast');
      expect((await rejection(a.rewind(up(x)))).message).to.contain('different systems');
    });

    it('follow demotes a running primary and rejects its waiting commits', async () => {
      const [a, b] = await cluster('b');
      await b.stop('fast');
      await b.start({ upstream: null, standby: true, timeoutMs: T });
      await a.setSynchronousStandbyNames('b');
      const pending = rejection(a.write());
      await clock.advance(0);
      expect(a.pendingWrites).to.equal(1);
      await a.follow(null, { timeoutMs: T });
      expect((await pending).code).to.equal('write_failed');
      expect(a.isWritable).to.equal(false);
      expect((await a.probe()).inRecovery).to.equal(true);
      expect(net.acknowledgedWrites).to.have.length(0);
    });

    it('follow on a running replica switches upstream without a restart', async () => {
      const [a, b, c] = await cluster('b', 'c');
      const started = (await c.probe()).postmasterStartTime;
      await clock.advance(5000);
      await c.follow(up(b), { timeoutMs: T });
      const f = await c.probe();
      expect(f.upstreamConnUrl).to.equal(b.connUrl);
      expect(f.postmasterStartTime).to.equal(started);
      expect(f.replicationState).to.equal('streaming');
      void a;
    });
  });

  describe('synchronous replication and acknowledged writes', () => {
    it('async mode acknowledges at once', async () => {
      const [a] = await cluster('b');
      const lsn = await a.write();
      expect(a.acknowledgedWrites.map((w) => w.lsn)).to.deep.equal([lsn]);
      expect(net.acknowledgedWrites).to.have.length(1);
    });

    it('a connected synchronous standby receives each commit before it is acknowledged', async () => {
      const [a, b] = await cluster('b', 'c');
      await a.setSynchronousStandbyNames('b');
      const lsn = await a.write();
      expect(b.lsn).to.equal(lsn);
      const rows = (await a.probe()).replication;
      expect(rows.map((r) => [r.application_name, r.sync_state, r.sync_priority])).to.deep.equal([
        ['b', 'sync', 1],
        ['c', 'async', 0],
      ]);
    });

    it('blocks while the synchronous standby lags; released when it catches up', async () => {
      const [a, b] = await cluster('b');
      await a.setSynchronousStandbyNames('b');
      b.setReplicationPaused(true);
      let acked: number | null = null;
      void a.write().then((lsn) => (acked = lsn));
      await clock.advance(1000);
      expect(acked).to.equal(null);
      expect(a.pendingWrites).to.equal(1);
      expect(a.acknowledgedWrites).to.have.length(0);
      b.setReplicationPaused(false);
      await b.probe();
      await Promise.resolve();
      expect(acked).to.equal(a.lsn);
      expect(a.acknowledgedWrites).to.have.length(1);
    });

    it('a commit waiting when the primary crashes is rejected and never counted', async () => {
      const [a, b] = await cluster('b');
      await a.setSynchronousStandbyNames('b');
      b.setReplicationPaused(true);
      const pending = a.write();
      a.crash();
      const e = await rejection(pending);
      expect(e.code).to.equal('write_failed');
      expect(e.message).to.contain('in doubt');
      expect(net.acknowledgedWrites).to.have.length(0);
    });

    it('terminateClientSessions rejects waiting commits', async () => {
      const [a, b] = await cluster('b');
      await a.setSynchronousStandbyNames('b');
      b.setReplicationPaused(true);
      const pending = a.write();
      await a.terminateClientSessions();
      expect((await rejection(pending)).code).to.equal('write_failed');
      expect(a.terminatedSessions).to.equal(1);
    });

    it('clearing synchronous_standby_names releases and acknowledges waiting commits', async () => {
      const [a, b] = await cluster('b');
      await a.setSynchronousStandbyNames('b');
      b.setReplicationPaused(true);
      const pending = a.write();
      await a.setSynchronousStandbyNames('');
      expect(await pending).to.equal(a.lsn);
      expect(a.acknowledgedWrites).to.have.length(1);
    });

    it('with no listed standby connected, commits wait', async () => {
      const [a] = await cluster('b');
      await a.setSynchronousStandbyNames('zz');
      let done = false;
      void a.write().then(() => (done = true));
      await clock.advance(10);
      expect(done).to.equal(false);
      await a.setSynchronousStandbyNames('');
      await clock.advance(0);
      expect(done).to.equal(true);
    });

    it('ANY 2 needs two listed standbys; rows say quorum', async () => {
      const [a, b, c] = await cluster('b', 'c');
      await a.setSynchronousStandbyNames('ANY 2 (b, c)');
      c.setReplicationPaused(true);
      let done = false;
      void a.write().then(() => (done = true));
      await clock.advance(0);
      expect(done).to.equal(false);
      c.setReplicationPaused(false);
      await c.probe();
      await clock.advance(0);
      expect(done).to.equal(true);
      expect((await a.probe()).replication.map((r) => r.sync_state)).to.deep.equal(['quorum', 'quorum']);
      void b;
    });

    it('FIRST 1 (b, c): c is potential and only b must confirm', async () => {
      const [a, , c] = await cluster('b', 'c');
      await a.setSynchronousStandbyNames('FIRST 1 (b, c)');
      c.setReplicationPaused(true);
      await a.write();
      expect((await a.probe()).replication.map((r) => [r.application_name, r.sync_state, r.sync_priority])).to.deep.equal([
        ['b', 'sync', 1],
        ['c', 'potential', 2],
      ]);
    });

    it('no acknowledged write is lost when the synchronous standby is promoted', async () => {
      const [a, b, c] = await cluster('b', 'c');
      await a.setSynchronousStandbyNames('b');
      c.setReplicationPaused(true);
      for (let i = 0; i < 5; i++) await a.write();
      a.crash();
      await b.promote(T);
      expect(net.lostAcknowledgedWrites(b)).to.deep.equal([]);
      expect(net.lostAcknowledgedWrites(c)).to.have.length(5);
      expect(a.writeIds()).to.deep.equal(b.writeIds());
    });

    it('async mode can lose acknowledged writes in a failover (what sync mode prevents)', async () => {
      const [a, b] = await cluster('b');
      b.setReplicationPaused(true);
      const lsn = await a.write();
      a.crash();
      await b.promote(T);
      expect(net.lostAcknowledgedWrites(b).map((w) => w.lsn)).to.deep.equal([lsn]);
      expect(net.writablePrimaries()).to.deep.equal([b]);
    });
  });

  describe('delays, timeouts and injected failures', () => {
    it('start takes the injected delay of the clock, reporting starting meanwhile', async () => {
      const a = make('a');
      await a.initdb();
      a.setDelay('start', 3000);
      let done = false;
      void a.start({ upstream: null, timeoutMs: T }).then(() => (done = true));
      await clock.advance(2999);
      expect(done).to.equal(false);
      expect((await a.probe()).state).to.equal('starting');
      await clock.advance(1);
      expect(done).to.equal(true);
      expect(a.state).to.equal('running');
    });

    it('a start slower than its timeout fails but the server keeps starting', async () => {
      const a = make('a');
      await a.initdb();
      a.setDelay('start', 5000);
      const p = a.start({ upstream: null, timeoutMs: 1000 });
      const caught = rejection(p);
      await clock.advance(1000);
      expect((await caught).code).to.equal('start_failed');
      expect(a.state).to.equal('starting');
      await clock.advance(4000);
      expect(a.state).to.equal('running');
    });

    it('a stop slower than its timeout is escalated to immediate (no WAL handover)', async () => {
      const [a, b] = await cluster('b');
      b.setReplicationPaused(true);
      await a.write();
      b.setReplicationPaused(false);
      a.setDelay('stop', 5000);
      const p = a.stop('fast', 1000);
      await clock.advance(1000);
      await p;
      expect(a.state).to.equal('stopped');
      expect(b.lsn).to.be.lessThan(a.lsn!);
    });

    it('a promotion slower than its timeout fails and completes later', async () => {
      const [a, b] = await cluster('b');
      a.crash();
      b.setDelay('promote', 3000);
      const caught = rejection(b.promote(1000));
      await clock.advance(1000);
      expect((await caught).code).to.equal('promote_failed');
      expect(b.isWritable).to.equal(false);
      await clock.advance(2000);
      expect(b.isWritable).to.equal(true);
    });

    it('a crash during a slow start wins', async () => {
      const a = make('a');
      await a.initdb();
      a.setDelay('start', 3000);
      const caught = rejection(a.start({ upstream: null, timeoutMs: T }));
      await clock.advance(1000);
      a.crash();
      await clock.advance(5000);
      expect((await caught).code).to.equal('start_failed');
      expect(a.state).to.equal('crashed');
      expect(a.isRunning).to.equal(false);
    });

    const codes: Array<[string, (db: FakeDatabase, other: FakeDatabase) => Promise<unknown>, string]> = [
      ['start', (db) => db.start({ upstream: null, timeoutMs: T }), 'start_failed'],
      ['stop', (db) => db.stop('fast'), 'stop_failed'],
      ['restart', (db) => db.restart(T), 'restart_failed'],
      ['reload', (db) => db.reload(), 'reload_failed'],
      ['promote', (db) => db.promote(T), 'promote_failed'],
      ['follow', (db, o) => db.follow(up(o), { timeoutMs: T }), 'follow_failed'],
      ['rewind', (db, o) => db.rewind(up(o)), 'rewind_failed'],
      ['createReplica', (db, o) => db.createReplica(up(o)), 'create_replica_failed'],
      ['removeDataDirectory', (db) => db.removeDataDirectory(), 'remove_data_failed'],
      ['checkpoint', (db) => db.checkpoint(), 'checkpoint_failed'],
      ['configure', (db) => db.configure({}), 'configure_failed'],
      ['setSynchronousStandbyNames', (db) => db.setSynchronousStandbyNames('x'), 'configure_failed'],
      ['syncSlots', (db) => db.syncSlots({ drop: [], create: [], advance: [] }), 'slots_failed'],
      ['write', (db) => db.write(), 'write_failed'],
      ['initdb', (db) => db.initdb(), 'initdb_failed'],
    ];
    for (const [op, call, code] of codes) {
      it(`failNext('${op}') throws DatabaseError('${code}') once`, async () => {
        const [a, b] = await cluster('b');
        a.failNext(op as Parameters<FakeDatabase['failNext']>[0]);
        const stateBefore = a.state;
        const e = await rejection(call(a, b));
        expect(e.code).to.equal(code);
        expect(e.message).to.contain('injected');
        if (!['stop', 'restart'].includes(op)) expect(a.state, 'a failed call leaves a running server running').to.equal(stateBefore);
      });
    }

    it('failure states: start_failed, stop_failed (still running), restart_failed, initdb_failed', async () => {
      const [a] = await cluster();
      a.failNext('stop');
      await rejection(a.stop('fast'));
      expect(a.state).to.equal('stop_failed');
      expect(a.isRunning).to.equal(true);
      a.failNext('restart');
      await rejection(a.restart(T));
      expect(a.state).to.equal('restart_failed');
      expect(a.isRunning).to.equal(false);
      a.failNext('start');
      await rejection(a.start({ upstream: null, timeoutMs: T }));
      expect(a.state).to.equal('start_failed');
      const x = make('x');
      x.failNext('initdb');
      await rejection(x.initdb());
      expect(x.state).to.equal('initdb_failed');
      expect(x.isInitialized).to.equal(false);
    });

    it('probe never throws and is delayed by at most 2 s', async () => {
      const [a] = await cluster();
      a.setDelay('probe', 10000);
      let done = false;
      void a.probe().then(() => (done = true));
      await clock.advance(2000);
      expect(done).to.equal(true);
    });
  });

  describe('a frozen server (SIGSTOP of its processes)', () => {
    it('answers nothing, commits nothing and sends no WAL; a commit sent to it goes on at thaw', async () => {
      const [a, b] = await cluster('b');
      const before = a.lsn;
      a.freeze();
      expect(a.isWritable).to.equal(false);
      const probe = a.probe();
      await clock.advance(2000);
      expect(await probe).to.deep.include({ state: 'running', running: false, inRecovery: null });
      let acked: number | null = null;
      void a.write().then((lsn) => (acked = lsn));
      await clock.advance(10_000);
      expect(acked).to.equal(null);
      // Nothing committed while frozen, so nothing was sent.
      expect(a.lsn).to.equal(before);
      expect(b.lsn).to.equal(before);
      a.thaw();
      await clock.advance(0);
      expect(acked).to.be.a('number');
      expect(a.lsn).to.be.greaterThan(before!);
      await b.probe();
      expect(b.lsn).to.equal(a.lsn);
    });

    it('an immediate stop kills it after its grace: a commit waiting on it fails, nothing of it answers at thaw', async () => {
      const [a] = await cluster();
      a.freeze();
      const write = rejection(a.write());
      const stop = a.stop('immediate');
      await clock.advance(1500);
      await stop;
      expect((await write).code).to.equal('write_failed');
      expect(a.state).to.equal('stopped');
      a.thaw();
      expect(a.isWritable).to.equal(false);
    });

    it('a fast stop with no timeout waits for the thaw, then shuts down', async () => {
      const [a] = await cluster();
      a.freeze();
      let stopped = false;
      void a.stop('fast').then(() => (stopped = true));
      await clock.advance(60_000);
      expect(stopped).to.equal(false);
      expect(a.isRunning).to.equal(true);
      a.thaw();
      expect(a.isRunning).to.equal(false);
      await clock.advance(500);
      expect(stopped).to.equal(true);
    });

    it('a restart stuck on it never starts the server once the machine went down (pg_ctl died with it)', async () => {
      const [a] = await cluster();
      a.freeze();
      const restart = rejection(a.restart(60_000));
      await clock.advance(10_000);
      a.powerOff();
      await clock.advance(1000);
      expect((await restart).code).to.equal('restart_failed');
      expect(a.isRunning).to.equal(false);
      expect(a.state).to.equal('crashed');
    });

    it('a promote request times out while frozen and takes effect at thaw', async () => {
      const [a, b] = await cluster('b');
      a.crash();
      b.freeze();
      const failed = rejection(b.promote(3000));
      await clock.advance(3000);
      expect((await failed).code).to.equal('promote_failed');
      expect(b.isInRecovery).to.equal(true);
      b.thaw();
      expect(b.isWritable).to.equal(true);
    });
  });

  describe('slots and history', () => {
    it('syncSlots applies a plan: creations, drops, advances of idle slots (never back, never past what the server holds)', async () => {
      const [a, b] = await cluster('b');
      await a.syncSlots({ drop: [], create: [{ name: 'b', type: 'physical' }, { name: 'c', type: 'physical' }, { name: 'cdc', type: 'logical', database: 'app', plugin: 'pgoutput' }], advance: [] });
      expect([...a.slots.keys()].sort()).to.deep.equal(['b', 'c', 'cdc']);
      await a.syncSlots({ drop: ['c'], create: [], advance: [] });
      expect([...a.slots.keys()].sort()).to.deep.equal(['b', 'cdc']);
      // A replica keeps physical slots too (for after a failover), but cannot create logical ones.
      await b.syncSlots({ drop: [], create: [{ name: 'c', type: 'physical' }], advance: [] });
      expect([...b.slots.keys()]).to.deep.equal(['c']);
      expect((await rejection(b.syncSlots({ drop: [], create: [{ name: 'x', type: 'logical', database: 'app', plugin: 'pgoutput' }], advance: [] }))).code).to.equal('slots_failed');
      const at = b.slots.get('c')!.restartLsn;
      await a.write(1000);
      await b.probe();
      await b.syncSlots({ drop: [], create: [], advance: [{ name: 'c', lsn: at + 10_000_000 }] });
      expect(b.slots.get('c')!.restartLsn).to.equal(b.replayedLsn);
      await b.syncSlots({ drop: [], create: [], advance: [{ name: 'c', lsn: at }] });
      expect(b.slots.get('c')!.restartLsn).to.equal(b.replayedLsn);
      await b.stop('fast');
      expect((await rejection(b.syncSlots({ drop: [], create: [], advance: [] }))).code).to.equal('slots_failed');
    });

    it('copyLogicalSlots copies the primary\'s logical slots to a replica, which restarts to load them', async () => {
      const [a, b] = await cluster('b');
      await a.syncSlots({ drop: [], create: [{ name: 'cdc', type: 'logical', database: 'app', plugin: 'pgoutput' }], advance: [] });
      const started = (await b.probe()).postmasterStartTime;
      await clock.advance(1000);
      await b.copyLogicalSlots({ name: 'a', connUrl: a.connUrl }, ['cdc'], 5000);
      expect(b.slots.get('cdc')).to.deep.include({ type: 'logical', database: 'app', plugin: 'pgoutput' });
      const f = await b.probe();
      expect(f.postmasterStartTime).to.not.equal(started);
      expect(f.slots.map((s) => s.name)).to.deep.equal(['cdc']);
      expect((await rejection(b.copyLogicalSlots({ name: 'a', connUrl: a.connUrl }, ['nothing'], 5000))).code).to.equal('slots_failed');
    });

    it('timeline history grows by one line per promotion and replicas learn it', async () => {
      const [a, b, c] = await cluster('b', 'c');
      await a.stop('fast');
      await b.promote(T);
      await c.follow(up(b), { timeoutMs: T });
      await b.stop('fast');
      await c.promote(T);
      expect((await c.timelineHistory()).map((l) => l[0])).to.deep.equal([1, 2]);
      expect(c.timeline).to.equal(3);
    });
  });
});

describe('parseSyncNames', () => {
  it('parses the forms PostgreSQL accepts', () => {
    expect(parseSyncNames('')).to.equal(null);
    expect(parseSyncNames('b')).to.deep.equal({ method: 'first', num: 1, names: ['b'] });
    expect(parseSyncNames('FIRST 2 (b, "C")')).to.deep.equal({ method: 'first', num: 2, names: ['b', 'C'] });
    expect(parseSyncNames('any 1 (b,c)')).to.deep.equal({ method: 'any', num: 1, names: ['b', 'c'] });
    expect(parseSyncNames('2 (b, c)')).to.deep.equal({ method: 'first', num: 2, names: ['b', 'c'] });
    expect(parseSyncNames('*')).to.deep.equal({ method: 'first', num: 1, names: ['*'] });
  });
});
