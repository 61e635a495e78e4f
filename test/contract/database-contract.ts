import { expect } from 'chai';
import type { LocalFacts } from '../../src/domain/cluster/model/facts.js';
import { DatabaseError } from '../../src/domain/errors.js';
import type { Database, Upstream } from '../../src/ports/database.js';

/** One member of the contract: its Database and how others reach it. */
export interface ContractNode {
  readonly name: string;
  readonly db: Database;
  readonly upstream: Upstream;
}

/** What the contract needs from a Database implementation under test. */
export interface DatabaseHarness {
  /** A member with an empty data directory. */
  node(name: string): Promise<ContractNode>;
  /** Commits one row on a running primary (a client's write). */
  write(node: ContractNode): Promise<void>;
  /** Lets replication move (the fake moves WAL on request; a real server on its own). */
  settle(): Promise<void>;
  /** Kills the server without a shutdown (kill -9 of the postmaster). */
  crash(node: ContractNode): Promise<void>;
  /** An upstream nobody answers on. */
  readonly unreachable: Upstream;
  /** The server version the implementation reports (e.g. 15: 150000-159999). */
  readonly major: number;
  cleanup(): Promise<void>;
}

const START_MS = 60_000;

/** Probes (letting replication move) until `ok` holds; fails with the last facts. */
async function probeUntil(h: DatabaseHarness, n: ContractNode, ok: (f: LocalFacts) => boolean, what: string, timeoutMs = 20_000): Promise<LocalFacts> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await h.settle();
    const f = await n.db.probe();
    if (ok(f)) return f;
    if (Date.now() > deadline) throw new Error(`${n.name}: ${what} not reached within ${timeoutMs} ms; last facts ${JSON.stringify(f)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The behaviour every Database must show, run against FakeDatabase and against PgDatabase on
 * a real PostgreSQL, so the fake the HA tests rely on cannot drift from the server: bootstrap,
 * replica creation and streaming, slots, promotion and timelines, demotion, rewind, pending
 * restarts, synchronous standby names, crash detection, failures as typed errors.
 */
export function databaseContract(name: string, makeHarness: () => Promise<DatabaseHarness>): void {
  describe(`Database contract: ${name}`, function () {
    this.timeout(120_000);
    let h: DatabaseHarness;
    let a: ContractNode;
    let b: ContractNode;

    before(async () => {
      h = await makeHarness();
      a = await h.node('node_a');
      b = await h.node('node_b');
    });
    after(async () => {
      await h?.cleanup();
    });

    it('an empty data directory: stopped, not initialized, no positions', async () => {
      const f = await a.db.probe();
      expect(f).to.include({ state: 'stopped', initialized: false, running: false, walLocation: null, timeline: null });
    });

    it('initdb then start: a writable primary on timeline 1 with a system identifier', async () => {
      await a.db.initdb();
      const stopped = await a.db.probe();
      expect(stopped).to.include({ state: 'stopped', initialized: true, running: false });
      expect(stopped.systemIdentifier).to.match(/^\d+$/);
      await a.db.start({ upstream: null, timeoutMs: START_MS });
      const f = await a.db.probe();
      expect(f).to.include({ state: 'running', running: true, inRecovery: false, timeline: 1, replicationState: null, pendingRestart: false });
      expect(f.systemIdentifier).to.equal(stopped.systemIdentifier);
      expect(f.serverVersion).to.be.within(h.major * 10000, h.major * 10000 + 9999);
      expect(f.walLocation).to.be.a('number').and.greaterThan(0);
      await h.write(a);
      expect((await a.db.probe()).walLocation).to.be.greaterThan(f.walLocation!);
    });

    it('a replica from a base backup streams from its upstream through a slot and follows its writes', async () => {
      await a.db.syncSlots({ drop: [], create: [{ name: 'node_b', type: 'physical' }], advance: [] });
      await b.db.createReplica(a.upstream);
      expect(await b.db.probe()).to.include({ state: 'stopped', initialized: true });
      await b.db.start({ upstream: a.upstream, slotName: 'node_b', timeoutMs: START_MS });
      const fb = await probeUntil(h, b, (f) => f.replicationState === 'streaming', 'streaming');
      expect(fb).to.include({ state: 'running', inRecovery: true, timeline: 1, upstreamConnUrl: a.upstream.connUrl, walLocation: null });
      expect(fb.systemIdentifier).to.equal((await a.db.probe()).systemIdentifier);
      await h.write(a);
      const target = (await a.db.probe()).walLocation!;
      await probeUntil(h, b, (f) => (f.replayedLocation ?? 0) >= target, 'replayed up to the primary');
      const fa = await probeUntil(h, a, (f) => f.replication.some((r) => r.application_name === 'node_b'), 'a replication row');
      expect(fa.replication.find((r) => r.application_name === 'node_b')).to.include({ state: 'streaming', sync_state: 'async' });
    });

    it('lowering a hot-standby parameter never keeps a replica from starting before its primary restarted', async () => {
      const caughtUp = async () => {
        await h.write(a);
        const target = (await a.db.probe()).walLocation!;
        await probeUntil(h, b, (f) => (f.replayedLocation ?? 0) >= target, 'the replica caught up');
      };
      // Raised: the replica first, then the primary.
      await b.db.configure({ max_prepared_transactions: 10 });
      await b.db.restart(START_MS);
      await a.db.configure({ max_prepared_transactions: 10 });
      await a.db.restart(START_MS);
      await caughtUp();
      // Lowered everywhere, and the replica restarts first: it must keep the primary's 10.
      await b.db.configure({});
      await a.db.configure({});
      await b.db.restart(START_MS);
      await probeUntil(h, b, (f) => f.replicationState === 'streaming', 'the replica streaming after its restart');
      await a.db.restart(START_MS);
      await caughtUp();
      await b.db.restart(START_MS);
      await probeUntil(h, b, (f) => f.replicationState === 'streaming' && !f.pendingRestart, 'the replica on the lower value');
    });

    it('synchronous_standby_names makes the replica synchronous', async () => {
      await a.db.setSynchronousStandbyNames('node_b');
      const fa = await probeUntil(h, a, (f) => f.replication.some((r) => r.application_name === 'node_b' && r.sync_state === 'sync'), 'a sync standby');
      expect(fa.replication[0]!.sync_state).to.equal('sync');
      await a.db.setSynchronousStandbyNames('');
      await probeUntil(h, a, (f) => f.replication.every((r) => r.sync_state === 'async'), 'async again');
    });

    it('a postmaster parameter change is pending until a restart; a reloadable one is not', async () => {
      await a.db.configure({ max_files_per_process: 900, work_mem: '8MB' });
      const pending = await probeUntil(h, a, (f) => f.pendingRestart, 'a pending restart');
      expect(Object.keys(pending.pendingRestartReason ?? {})).to.deep.equal(['max_files_per_process']);
      await a.db.restart(START_MS);
      const after = await a.db.probe();
      expect(after).to.include({ state: 'running', pendingRestart: false, inRecovery: false });
    });

    it('promote: the replica becomes a writable primary on timeline 2, with the switch in its history', async () => {
      await b.db.promote(START_MS);
      // As the agent does: the checkpoint puts the new timeline into the control file, where pg_rewind reads it.
      await b.db.checkpoint();
      const fb = await b.db.probe();
      expect(fb).to.include({ state: 'running', inRecovery: false, timeline: 2, replicationState: null });
      await h.write(b);
      const history = await b.db.timelineHistory();
      expect(history).to.have.length(1);
      expect(history[0]![0]).to.equal(1);
      expect(history[0]![1]).to.be.a('number').and.greaterThan(0);
      expect(await a.db.timelineHistory()).to.deep.equal([]);
    });

    it('the old primary stops, is rewound onto the new timeline and follows the new primary', async () => {
      await h.write(a);
      await a.db.stop('fast');
      expect(await a.db.probe()).to.include({ state: 'stopped', running: false });
      await a.db.rewind(b.upstream);
      await a.db.start({ upstream: b.upstream, timeoutMs: START_MS });
      const fa = await probeUntil(h, a, (f) => f.replicationState === 'streaming' && f.timeline === 2, 'streaming on timeline 2');
      expect(fa).to.include({ inRecovery: true, upstreamConnUrl: b.upstream.connUrl });
    });

    it('follow() moves a replica to another upstream, or makes it a leaderless standby', async () => {
      await a.db.follow(null, { timeoutMs: START_MS });
      await probeUntil(h, a, (f) => f.running && f.inRecovery === true && f.upstreamConnUrl === null, 'a leaderless standby');
      await a.db.follow(b.upstream, { timeoutMs: START_MS });
      await probeUntil(h, a, (f) => f.replicationState === 'streaming' && f.upstreamConnUrl === b.upstream.connUrl, 'streaming again');
    });

    it('a standby keeps physical slots for its own replicas: a cascade streams through a slot on it', async () => {
      await a.db.syncSlots({ drop: [], create: [{ name: 'node_c', type: 'physical' }], advance: [] });
      const c = await h.node('node_c');
      await c.db.createReplica(a.upstream);
      await c.db.start({ upstream: a.upstream, slotName: 'node_c', timeoutMs: START_MS });
      const fc = await probeUntil(h, c, (f) => f.replicationState === 'streaming', 'the cascade streaming');
      expect(fc).to.include({ upstreamConnUrl: a.upstream.connUrl, upstreamSlotName: 'node_c', timeline: 2 });
      await h.write(b);
      const target = (await b.db.probe()).walLocation!;
      await probeUntil(h, c, (f) => (f.replayedLocation ?? 0) >= target, 'the cascade caught up');
      await c.db.stop('fast');
    });

    it('a crashed server is seen as crashed, and starts again', async () => {
      await h.crash(a);
      // For a moment the killed postmaster may still exist without answering (not running, state unchanged): wait for it to be gone.
      const f = await probeUntil(h, a, (x) => !x.running && x.state !== 'running', 'not running');
      expect(f.state).to.be.oneOf(['crashed', 'stopped']);
      expect(f.initialized).to.equal(true);
      await a.db.start({ upstream: b.upstream, timeoutMs: START_MS });
      await probeUntil(h, a, (x) => x.replicationState === 'streaming', 'streaming after the crash');
    });

    it('failures are typed: a rewind of a running server or from nowhere, a base backup from nowhere (source unreachable, which leaves the directory empty) or without a source', async () => {
      let error: unknown;
      try {
        await a.db.rewind(b.upstream);
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(DatabaseError).and.have.property('code', 'rewind_failed');
      expect((await a.db.probe()).running, 'a refused rewind leaves the server running').to.equal(true);
      await a.db.stop('immediate');
      // A source that does not answer leaves the target untouched, and says so.
      error = undefined;
      try {
        await a.db.rewind(h.unreachable);
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(DatabaseError).and.have.property('code', 'rewind_source_unreachable');
      await a.db.removeDataDirectory();
      expect(await a.db.probe()).to.include({ initialized: false, running: false });
      error = undefined;
      try {
        await a.db.createReplica(h.unreachable);
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(DatabaseError).and.have.property('code', 'create_replica_source_unreachable');
      expect(await a.db.probe()).to.include({ initialized: false });
      // Without a source, only a method that needs none could run (basebackup cannot).
      error = undefined;
      try {
        await a.db.createReplica(null);
      } catch (e) {
        error = e;
      }
      expect(error).to.be.instanceOf(DatabaseError).and.have.property('code', 'create_replica_failed');
      expect(await a.db.probe()).to.include({ initialized: false });
    });

    it('a bootstrap marked unfinished says so, stopped and running, until clearBootstrapMark; removing the data removes the mark', async () => {
      await a.db.initdb({ unfinished: true });
      expect(await a.db.probe()).to.include({ initialized: true, bootstrapUnfinished: true });
      await a.db.start({ upstream: null, timeoutMs: START_MS });
      expect(await probeUntil(h, a, (f) => f.running, 'running')).to.include({ bootstrapUnfinished: true });
      await a.db.clearBootstrapMark();
      expect((await a.db.probe()).bootstrapUnfinished).to.equal(undefined);
      await a.db.stop('immediate');
      await a.db.removeDataDirectory();
      await a.db.initdb({ unfinished: true });
      await a.db.removeDataDirectory();
      const gone = await a.db.probe();
      expect(gone.initialized).to.equal(false);
      expect(gone.bootstrapUnfinished).to.equal(undefined);
    });
  });
}
