import type { HistoryLine } from '../../domain/cluster/model/cluster.js';
import type { ParameterValue } from '../../domain/cluster/config/config.js';
import { stoppedFacts, type LocalFacts, type PendingChange, type ReplicationRow, type SlotFact } from '../../domain/cluster/model/facts.js';
import type { DatabaseState } from '../../domain/cluster/model/states.js';
import { DatabaseError, type DatabaseErrorCode } from '../../domain/errors.js';
import type { Clock } from '../../ports/clock.js';
import type { CreateReplicaOptions, Database, InitdbOptions, PromoteOptions, StartOptions, StopMode, StopOptions, Upstream } from '../../ports/database.js';
import type { SlotPlan } from '../../domain/cluster/ha/decision.js';
import { FakeDatabaseNetwork, type AcknowledgedWrite, type WalRecord } from './fake-database-network.js';
import { parseSyncNames, syncPriority } from './fake-sync-names.js';
import { IMMEDIATE_SHUTDOWN_GRACE_MS } from './shutdown-grace.js';

export { FakeDatabaseNetwork, type AcknowledgedWrite, type WalRecord } from './fake-database-network.js';

/** Operations whose duration and failure a test can inject. */
export type FakeDatabaseOp =
  | 'probe'
  | 'initdb'
  | 'start'
  | 'stop'
  | 'restart'
  | 'reload'
  | 'promote'
  | 'follow'
  | 'rewind'
  | 'createReplica'
  | 'removeDataDirectory'
  | 'checkpoint'
  | 'configure'
  | 'setSynchronousStandbyNames'
  | 'syncSlots'
  | 'copyLogicalSlots'
  | 'write';

const ERROR_CODES: Record<FakeDatabaseOp, DatabaseErrorCode> = {
  probe: 'probe_failed',
  initdb: 'initdb_failed',
  start: 'start_failed',
  stop: 'stop_failed',
  restart: 'restart_failed',
  reload: 'reload_failed',
  promote: 'promote_failed',
  follow: 'follow_failed',
  rewind: 'rewind_failed',
  createReplica: 'create_replica_failed',
  removeDataDirectory: 'remove_data_failed',
  checkpoint: 'checkpoint_failed',
  configure: 'configure_failed',
  setSynchronousStandbyNames: 'configure_failed',
  syncSlots: 'slots_failed',
  copyLogicalSlots: 'slots_failed',
  write: 'write_failed',
};

/** Parameters of context `postmaster` (a change waits for a restart), with PostgreSQL 15 defaults. */
const POSTMASTER_DEFAULTS: Readonly<Record<string, string>> = {
  shared_buffers: '128MB',
  max_connections: '100',
  max_files_per_process: '1000',
  max_wal_senders: '10',
  max_replication_slots: '10',
  max_worker_processes: '8',
  max_locks_per_transaction: '64',
  max_pred_locks_per_transaction: '64',
  max_prepared_transactions: '0',
  wal_level: 'replica',
  wal_log_hints: 'off',
  wal_buffers: '-1',
  hot_standby: 'on',
  track_commit_timestamp: 'off',
  shared_preload_libraries: '',
  archive_mode: 'off',
  huge_pages: 'try',
  port: '5432',
  listen_addresses: 'localhost',
};

/** End of WAL right after initdb, as a fresh PostgreSQL 15 cluster shows it (0/1000028-ish). */
const INITDB_LSN = 0x1000028;
/** Size of the end-of-recovery record a promotion writes. */
const END_OF_RECOVERY_BYTES = 0x28;

/** The on-disk state: survives stop and crash, goes with removeDataDirectory. */
interface DataDir {
  readonly systemId: string;
  /** WAL received (replica) or written (primary), oldest first. */
  records: WalRecord[];
  /** How many of `records` have been replayed. */
  replayed: number;
  history: HistoryLine[];
  /** standby.signal + primary_conninfo + primary_slot_name. */
  recovery: { standby: boolean; upstreamConnUrl: string | null; slotName: string | null };
  /** A rewind stopped after it began rewriting this directory: it is neither started nor rewound again, only replaced. */
  halfRewound?: boolean;
  /** A new cluster not registered yet after its post_bootstrap script (see Database.initdb's `unfinished`). */
  bootstrapUnfinished?: boolean;
  /** The fencer's hold on a primary's data (standby.signal it placed): a start no agent decided comes up read-only. */
  fenceHold?: boolean;
}

/** A replication slot of the fake server. */
export interface FakeSlot {
  readonly type: 'physical' | 'logical';
  readonly database: string | null;
  readonly plugin: string | null;
  /** Physical: oldest WAL kept; logical: where decoding restarts. */
  readonly restartLsn: number;
  /** Logical: what the consumer confirmed. */
  readonly confirmedFlushLsn: number | null;
}

interface SyncWaiter {
  readonly record: WalRecord;
  readonly resolve: (lsn: number) => void;
  readonly reject: (e: Error) => void;
}

/** Options of a fake server. */
export interface FakeDatabaseOptions {
  /** Member name, also the application_name it streams under. */
  readonly name: string;
  /** Address peers use to reach it; the network key. */
  readonly connUrl: string;
  /** Shared with the other servers it replicates with; default: a network of its own. */
  readonly network?: FakeDatabaseNetwork;
  readonly clock: Clock;
  /** server_version_num; default 150018. */
  readonly serverVersion?: number;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace('Z', '+00:00');
}

function settingText(v: ParameterValue | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'boolean') return v ? 'on' : 'off';
  return String(v);
}

/** `mine` is a prefix of `theirs`: same records by identity, so `theirs` can stream to `mine`. */
function isPrefix(mine: readonly WalRecord[], theirs: readonly WalRecord[]): boolean {
  return mine.length <= theirs.length && (mine.length === 0 || theirs[mine.length - 1] === mine[mine.length - 1]);
}

/** How long a query to a frozen server waits before the caller's timeout ends it (the agent's session: 1 s statement timeout, +0.5 s on the client). */
const FROZEN_QUERY_MS = 1_500;
/** How long a stop with no timeout waits for a postmaster that does not exit (PgDatabase's default hard limit). */
const STOP_HARD_LIMIT_MS = 300_000;
/** How often a stop (or a promotion) of a frozen server looks whether it is done. */
const FROZEN_POLL_MS = 500;

/**
 * A PostgreSQL server as a state machine, for unit tests and the HA simulation. WAL is a
 * list of records shared by identity between servers, so divergence after a failover is
 * exact: a server can stream from an upstream only while its WAL is a prefix of the
 * upstream's; otherwise it needs `rewind`. Replicas catch up on their own `probe()`, on
 * `network.replicate()`, and (synchronous standbys) on every commit of their primary.
 *
 * Synchronous commit: when synchronous_standby_names is set on the primary, `write()`
 * resolves only once enough listed standbys that stream from it have received the record
 * (FIRST n: the n highest-priority connected ones; ANY n: any n); until then it stays
 * pending, as a real commit blocks. A pending write is rejected with `write_failed` when
 * the server stops, crashes, is demoted or terminates client sessions (the commit is then
 * in doubt and never counted as acknowledged); clearing synchronous_standby_names
 * releases and acknowledges the waiting writes, as PostgreSQL does. freeze() stops every
 * process of the server as SIGSTOP would, until thaw() or a kill.
 */
export class FakeDatabase implements Database {
  readonly name: string;
  readonly connUrl: string;
  readonly network: FakeDatabaseNetwork;
  private readonly clock: Clock;
  private readonly serverVersion: number;

  private stateValue: DatabaseState = 'stopped';
  private data: DataDir | null = null;
  private running = false;
  private inRecovery = false;
  /** What pg_control would say of the last run: in recovery (a standby) until a promotion finished; a new data directory's is not. */
  private controlInRecovery = false;
  private streaming = false;
  /** A fast or immediate stop is under way: no session can commit any more (see isWritable). */
  private shuttingDown = false;
  private startedAt: number | null = null;
  /** Bumped by every lifecycle change, so a delayed completion can tell it was overtaken. */
  private generation = 0;
  private configured: Record<string, ParameterValue> = {};
  private applied: Record<string, ParameterValue> = {};
  private syncNames = '';
  private readonly slotMap = new Map<string, FakeSlot>();
  private waiters: SyncWaiter[] = [];
  private readonly acked: AcknowledgedWrite[] = [];
  private readonly failures = new Map<FakeDatabaseOp, number>();
  private readonly delays = new Map<FakeDatabaseOp, number>();
  private replicationPaused = false;
  private replicationLagBytes = 0;
  private replayPaused = false;
  private terminated = 0;
  /** End of WAL at the last clean shutdown of a primary (its shutdown checkpoint); null after any other stop or once started. */
  private shutdownLsn: number | null = null;
  private promoteOptions: PromoteOptions | null = null;
  /** SIGSTOP of every server process: it answers nothing, commits nothing, sends and receives no WAL. */
  private frozen = false;
  /** Bumped when the machine goes down: an operation begun before it never starts the server after it. */
  private powerEpoch = 0;
  /** Bumped when the agent driving this server dies: what it still had to do in an operation (a restart's start) never happens. */
  private agentEpoch = 0;
  /** State the server was left in when the machine went down (what an operation cut short leaves). */
  private powerOffState: DatabaseState = 'stopped';
  /** Signals sent while frozen, acted on at thaw (a shutdown, a promote request), with the generation they were sent in. */
  private pendingSignals: { stop: number | null; promote: number | null } = { stop: null, promote: null };
  /** Commits sent to the frozen server: they go on at thaw, and fail if it is killed first. */
  private thawWaiters: { resolve: () => void; reject: (e: Error) => void }[] = [];

  constructor(opts: FakeDatabaseOptions) {
    this.name = opts.name;
    this.connUrl = opts.connUrl;
    this.network = opts.network ?? new FakeDatabaseNetwork();
    this.clock = opts.clock;
    this.serverVersion = opts.serverVersion ?? 150018;
    this.network.register(this);
  }

  // ---------------------------------------------------------------- fault injection

  /** Makes `op` take `ms` of the clock (start: time until connections are accepted). 0 removes it. */
  setDelay(op: FakeDatabaseOp, ms: number): void {
    if (ms > 0) this.delays.set(op, ms);
    else this.delays.delete(op);
  }

  /** Makes the next `times` calls of `op` throw DatabaseError with the op's code (probe never throws). */
  failNext(op: FakeDatabaseOp, times = 1): void {
    this.failures.set(op, (this.failures.get(op) ?? 0) + times);
  }

  /** Removes every injected delay and failure. */
  clearFaults(): void {
    this.failures.clear();
    this.delays.clear();
  }

  /** Stops (true) or resumes receiving WAL while staying connected: a lagging replica. */
  setReplicationPaused(paused: boolean): void {
    this.replicationPaused = paused;
  }

  /** Receiving WAL is stopped (setReplicationPaused). */
  get isReplicationPaused(): boolean {
    return this.replicationPaused;
  }

  /** Keeps this replica at least `bytes` behind its upstream (0 removes the lag). */
  setReplicationLag(bytes: number): void {
    this.replicationLagBytes = Math.max(0, bytes);
  }

  /** pg_wal_replay_pause / resume: received WAL is no longer replayed while paused. */
  setReplayPaused(paused: boolean): void {
    this.replayPaused = paused;
    if (!paused && this.data && this.running) this.data.replayed = this.data.records.length;
  }

  /**
   * SIGSTOP of every process of a running server: it still runs (state `running`) but answers
   * no probe or query, commits nothing and sends or receives no WAL; a commit sent to it waits.
   * Signals it gets meanwhile (a shutdown, a promote request) take effect at thaw(); only a kill
   * (an immediate stop that waited out its grace, crash()) ends it while frozen.
   */
  freeze(): void {
    if (this.running) this.frozen = true;
  }

  /** SIGCONT: the server goes on where it stopped, then acts on the signals it got meanwhile. */
  thaw(): void {
    if (!this.frozen) return;
    this.frozen = false;
    const { stop, promote } = this.pendingSignals;
    this.pendingSignals = { stop: null, promote: null };
    const waiting = this.thawWaiters;
    this.thawWaiters = [];
    for (const w of waiting) w.resolve();
    if (stop === this.generation && this.running) {
      this.shutdown(true);
      this.stateValue = 'stopped';
      return;
    }
    if (promote === this.generation) this.finishPromote(this.generation);
    if (this.running && this.inRecovery) this.pullFromUpstream();
    for (const s of this.streamingStandbys()) s.pullFromUpstream();
    this.releaseWaiters();
  }

  /** The postmaster dies: not running, state `crashed`, waiting commits fail, WAL on disk stays. */
  crash(): void {
    const wasUp = this.running || this.stateValue === 'starting' || this.stateValue === 'restarting';
    this.shutdown(false);
    if (wasUp) this.stateValue = 'crashed';
  }

  /**
   * The agent process that drives this server dies: an operation it had under way stops where
   * the agent was (PgDatabase's restart is a stop then a start, both run by the agent), and a
   * postmaster already launched goes on.
   */
  agentDied(): void {
    this.agentEpoch++;
  }

  /**
   * The fencer's hold (PgFence.holdReadOnly): a primary's data starts read-only until the agent
   * sets its role again (a start, a follow, a promotion, a restart begun after the hold).
   */
  holdReadOnly(): void {
    if (this.data && !this.data.recovery.standby) this.data.fenceHold = true;
  }

  /** The epochs an operation begins in: a start it still has to do happens only while both stand. */
  private epochs(): { readonly power: number; readonly agent: number } {
    return { power: this.powerEpoch, agent: this.agentEpoch };
  }

  /** Whether the fencer's hold is on the data directory. */
  get fenceHeld(): boolean {
    return this.data?.fenceHold === true;
  }

  /** The whole machine goes down: the postmaster dies as in crash(), and an operation in progress (a restart's stop, say) never goes on to start it. */
  powerOff(): void {
    this.powerEpoch++;
    this.crash();
    this.powerOffState = this.stateValue;
  }

  // ---------------------------------------------------------------- getters for tests

  get state(): DatabaseState {
    return this.stateValue;
  }
  /** The options of the last promote() call (null before any). */
  get lastPromoteOptions(): PromoteOptions | null {
    return this.promoteOptions;
  }
  get isRunning(): boolean {
    return this.running;
  }
  /** When the running server started (fake epoch ms), null while it is down: it changes with every restart. */
  get runningSince(): number | null {
    return this.running ? this.startedAt : null;
  }
  /** Running but frozen (see freeze()). */
  get isFrozen(): boolean {
    return this.frozen;
  }
  get isInRecovery(): boolean {
    return this.running && this.inRecovery;
  }
  /** pg_control's view: the server ran (or stopped) in recovery since it last started, and accepted no write. */
  get ranInRecovery(): boolean {
    return this.data !== null && this.controlInRecovery;
  }
  get isInitialized(): boolean {
    return this.data !== null;
  }
  /**
   * Running and read-write: a client could commit here. A fast or immediate shutdown in
   * progress refuses new connections and has terminated the sessions (PostgreSQL sends
   * them SIGTERM or SIGQUIT at once), so nothing commits while it lasts; a smart one lets
   * the sessions finish. A frozen server commits nothing until it is thawed.
   */
  get isWritable(): boolean {
    return this.running && !this.inRecovery && !this.shuttingDown && !this.frozen;
  }
  /** End of local WAL (written on a primary, received on a replica); null without data. */
  get lsn(): number | null {
    const r = this.data?.records;
    return r && r.length ? r[r.length - 1]!.endLsn : null;
  }
  /** Replayed position; null without data. */
  get replayedLsn(): number | null {
    const d = this.data;
    return d && d.replayed > 0 ? d.records[d.replayed - 1]!.endLsn : null;
  }
  /** Timeline of the newest WAL record; null without data. */
  get timeline(): number | null {
    const r = this.data?.records;
    return r && r.length ? r[r.length - 1]!.timeline : null;
  }
  /** The data is a new cluster's not registered yet after its post_bootstrap script. */
  get isBootstrapUnfinished(): boolean {
    return this.data?.bootstrapUnfinished === true;
  }

  get systemIdentifier(): string | null {
    return this.data?.systemId ?? null;
  }
  /** Connected to its upstream with compatible WAL (as of the last catch-up). */
  get isStreaming(): boolean {
    return this.running && this.inRecovery && this.streaming;
  }
  /** Its upstream is up but this server's WAL is not a prefix of the upstream's: rewind needed. */
  get isDiverged(): boolean {
    const d = this.data;
    const up = d?.recovery.upstreamConnUrl ? this.peer(d.recovery.upstreamConnUrl) : undefined;
    if (!d || !up || !up.data || up.data.systemId !== d.systemId) return false;
    return !isPrefix(d.records, up.data.records);
  }
  /** conn_url this server is configured to follow. */
  get upstreamConnUrl(): string | null {
    return this.data?.recovery.upstreamConnUrl ?? null;
  }
  /** Writes this server acknowledged to clients. */
  get acknowledgedWrites(): readonly AcknowledgedWrite[] {
    return this.acked;
  }
  /** Commits waiting for a synchronous standby. */
  get pendingWrites(): number {
    return this.waiters.length;
  }
  get synchronousStandbyNames(): string {
    return this.syncNames;
  }
  /** Parameters last given to configure(). */
  get parameters(): Readonly<Record<string, ParameterValue>> {
    return this.configured;
  }
  /** Replication slots on this server. */
  get slots(): ReadonlyMap<string, FakeSlot> {
    return this.slotMap;
  }
  /** A standby streams from this server through slot `name`. */
  slotActive(name: string): boolean {
    return this.streamingStandbys().some((s) => s.data!.recovery.slotName === name);
  }
  /** Restoring WAL from the archive (a standby with no upstream and a restore_command): the primary archives what it writes. */
  get inArchiveRecovery(): boolean {
    return this.running && this.inRecovery && !this.data?.recovery.upstreamConnUrl && String(this.applied['restore_command'] ?? '') !== '';
  }
  /** How many times terminateClientSessions ran. */
  get terminatedSessions(): number {
    return this.terminated;
  }
  /** The local WAL holds write `id`. */
  hasWrite(id: number): boolean {
    const records = this.data?.records;
    if (!records) return false;
    // Ids increase along any server's WAL (records are only ever appended in creation order).
    let lo = 0;
    let hi = records.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const rid = records[mid]!.id;
      if (rid === id) return records[mid]!.kind === 'write';
      if (rid < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }
  /** Ids of every client write in the local WAL. */
  writeIds(): number[] {
    return (this.data?.records ?? []).filter((r) => r.kind === 'write').map((r) => r.id);
  }

  // ---------------------------------------------------------------- client traffic

  /**
   * A client commits `bytes` of WAL on this server; resolves with the new LSN once the
   * commit is acknowledged (see the class comment for synchronous mode). Rejects with
   * DatabaseError('write_failed') on a server that is not a running primary.
   */
  async write(bytes = 128): Promise<number> {
    this.injected('write');
    if (this.frozen) await new Promise<void>((resolve, reject) => this.thawWaiters.push({ resolve, reject }));
    if (!this.isWritable || !this.data) {
      this.fail('write', this.shuttingDown ? 'the database system is shutting down' : this.running ? 'cannot execute INSERT in a read-only transaction' : 'server is not running');
    }
    const data = this.data;
    const record: WalRecord = {
      id: this.network.nextRecordId(),
      endLsn: this.lsn! + Math.max(1, Math.floor(bytes)),
      timeline: this.timeline!,
      at: this.clock.now(),
      kind: 'write',
    };
    data.records.push(record);
    data.replayed = data.records.length;
    if (!parseSyncNames(this.syncNames)) {
      this.acknowledge(record);
      return record.endLsn;
    }
    return new Promise<number>((resolve, reject) => {
      this.waiters.push({ record, resolve, reject });
      // A connected synchronous standby receives each commit as it happens.
      for (const s of this.streamingStandbys()) if (this.priorityOf(s) > 0) s.pullFromUpstream();
      this.releaseWaiters();
    });
  }

  // ---------------------------------------------------------------- Database port

  async probe(): Promise<LocalFacts> {
    // A frozen server lets the probe run out its 2 s budget.
    const delay = this.frozen ? 2000 : Math.min(this.delays.get('probe') ?? 0, 2000);
    if (delay > 0) await this.clock.sleep(delay);
    if (this.running && this.inRecovery) this.pullFromUpstream();
    return this.facts();
  }

  async initdb(opts: InitdbOptions = {}): Promise<void> {
    if (this.takeFailure('initdb')) {
      if (!this.running) this.stateValue = 'initdb_failed';
      this.fail('initdb', 'injected failure');
    }
    if (this.data) throw new DatabaseError('data_dir_not_empty', `${this.name}: initdb: data directory is not empty`);
    if (this.running) this.fail('initdb', 'server is running');
    this.stateValue = 'initdb';
    await this.pause('initdb');
    const record: WalRecord = { id: this.network.nextRecordId(), endLsn: INITDB_LSN, timeline: 1, at: this.clock.now(), kind: 'initdb' };
    this.controlInRecovery = false;
    this.data = {
      systemId: this.network.nextSystemIdentifier(),
      records: [record],
      replayed: 1,
      history: [],
      recovery: { standby: false, upstreamConnUrl: null, slotName: null },
      ...(opts.unfinished ? { bootstrapUnfinished: true } : {}),
    };
    this.stateValue = 'stopped';
  }

  async clearBootstrapMark(): Promise<void> {
    if (this.data) delete this.data.bootstrapUnfinished;
  }

  async start(opts: StartOptions): Promise<void> {
    const power = this.epochs();
    if (this.takeFailure('start')) {
      if (!this.running) this.stateValue = 'start_failed';
      this.fail('start', 'injected failure');
    }
    const data = this.data;
    if (!data) {
      this.stateValue = 'start_failed';
      this.fail('start', 'data directory is empty');
    }
    // pg_ctl start on a running server changes nothing (use follow() to change the role).
    if (this.running) return;
    data.recovery = {
      standby: opts.upstream !== null || opts.standby === true,
      upstreamConnUrl: opts.upstream?.connUrl ?? null,
      slotName: opts.slotName ?? null,
    };
    data.fenceHold = false;
    await this.boot('start', opts.timeoutMs, 'starting', power);
  }

  /** `opts.untilShutdownCheckpoint` changes nothing here: the fake's shutdown checkpoint and exit are one moment. */
  async stop(mode: StopMode, timeoutMs?: number, _opts: StopOptions = {}): Promise<void> {
    if (this.takeFailure('stop')) {
      if (this.running) this.stateValue = 'stop_failed';
      this.fail('stop', 'injected failure');
    }
    if (!this.running) {
      // Cancels a start still in progress; stopping a crashed or stopped server is a no-op.
      this.generation++;
      if (this.stateValue !== 'initdb_failed') this.stateValue = 'stopped';
      return;
    }
    if (this.frozen) return this.stopFrozen(mode, timeoutMs, 'stop');
    this.stateValue = 'stopping';
    this.shuttingDown = mode !== 'smart';
    const generation = ++this.generation;
    const delay = this.delays.get('stop') ?? 0;
    // A shutdown slower than timeoutMs is escalated to immediate, as the port says.
    const escalate = timeoutMs !== undefined && delay > timeoutMs;
    const wait = escalate ? timeoutMs : delay;
    if (wait > 0) await this.clock.sleep(wait);
    if (generation !== this.generation) return; // crashed meanwhile: it is down anyway
    this.shutdown(mode !== 'immediate' && !escalate);
    this.stateValue = 'stopped';
  }

  async restart(timeoutMs: number): Promise<void> {
    const power = this.epochs();
    const heldBefore = this.data?.fenceHold === true;
    if (this.takeFailure('restart')) {
      this.shutdown(true);
      this.stateValue = 'restart_failed';
      this.fail('restart', 'injected failure');
    }
    if (!this.data) {
      this.stateValue = 'restart_failed';
      this.fail('restart', 'data directory is empty');
    }
    if (this.frozen) await this.stopFrozen('fast', timeoutMs, 'restart');
    this.stateValue = 'restarting';
    if (this.running) {
      // pg_ctl restart stops fast first.
      this.shuttingDown = true;
      await this.pause('stop');
      this.shutdown(true);
    }
    if (this.data?.fenceHold && !heldBefore && this.agentEpoch === power.agent && this.powerEpoch === power.power) {
      // As PgDatabase: the fencer stopped the server during this restart; the start is decided again.
      this.stateValue = 'restart_failed';
      this.fail('restart', 'the fencer stopped this server during the restart (the agent was frozen or cut off): not starting it as the restart planned');
    }
    if (this.data) this.data.fenceHold = false;
    await this.boot('restart', timeoutMs, 'restarting', power);
  }

  async reload(): Promise<void> {
    this.injected('reload');
    if (!this.running) this.fail('reload', 'server is not running');
    await this.pause('reload');
    this.applyReloadable();
  }

  async promote(timeoutMs: number, opts: PromoteOptions = {}): Promise<void> {
    this.promoteOptions = opts;
    this.injected('promote');
    if (!this.running || !this.inRecovery) this.fail('promote', 'server is not in standby mode');
    if (this.frozen) {
      // pg_promote() times out; the fallback's promote signal waits for the thaw, and so does the caller, up to its timeout.
      const generation = this.generation;
      this.pendingSignals.promote = generation;
      const deadline = this.clock.now() + timeoutMs;
      while (generation === this.generation && this.frozen && this.clock.now() < deadline) await this.clock.sleep(Math.min(FROZEN_POLL_MS, deadline - this.clock.now()));
      if (generation === this.generation && this.running && !this.inRecovery) {
        opts.onWritable?.();
        return;
      }
      this.fail('promote', `server did not promote within ${timeoutMs} ms (it does not answer; the promote request is pending)`);
    }
    if (opts.walAtLeast !== undefined && (this.lsn ?? 0) < opts.walAtLeast) {
      this.pullFromUpstream();
      // Still behind: what may arrive within the wait, then the promotion goes ahead as the real one does.
      if ((this.lsn ?? 0) < opts.walAtLeast && (opts.catchUpMs ?? 0) > 0) {
        await this.clock.sleep(Math.min(opts.catchUpMs ?? 0, timeoutMs));
        this.pullFromUpstream();
      }
      if (!this.running || !this.inRecovery) this.fail('promote', 'server is not in standby mode');
    }
    const generation = this.generation;
    const delay = this.delays.get('promote') ?? 0;
    if (delay > timeoutMs) {
      await this.clock.sleep(timeoutMs);
      if (generation === this.generation) void this.clock.sleep(delay - timeoutMs).then(() => this.finishPromote(generation));
      this.fail('promote', `server did not promote within ${timeoutMs} ms (still promoting)`);
    }
    if (delay > 0) await this.clock.sleep(delay);
    if (!this.finishPromote(generation)) this.fail('promote', 'server stopped during promotion');
    opts.onWritable?.();
  }

  async follow(upstream: Upstream | null, opts: { readonly slotName?: string; readonly timeoutMs: number }): Promise<void> {
    this.injected('follow');
    const power = this.epochs();
    const data = this.data;
    if (!data) this.fail('follow', 'data directory is empty');
    await this.pause('follow');
    // A frozen primary is stopped the way PgDatabase stops it (fast, escalated, killed); a frozen replica takes the new upstream at thaw.
    if (this.frozen && !this.inRecovery) await this.stopFrozen('fast', opts.timeoutMs, 'follow');
    data.recovery = { standby: true, upstreamConnUrl: upstream?.connUrl ?? null, slotName: opts.slotName ?? null };
    data.fenceHold = false;
    if (this.running && this.inRecovery) {
      // primary_conninfo is reloadable since PostgreSQL 13: no restart for a new upstream.
      this.streaming = false;
      this.pullFromUpstream();
      return;
    }
    if (this.running) {
      this.stateValue = 'stopping';
      this.shutdown(true);
    }
    await this.boot('follow', opts.timeoutMs, 'starting', power);
  }

  async rewind(source: Upstream): Promise<void> {
    this.injected('rewind');
    const data = this.data;
    if (!data) this.fail('rewind', 'data directory is empty');
    if (this.running) this.fail('rewind', 'target server must be shut down');
    if (data.halfRewound) throw new DatabaseError('rewind_interrupted', `${this.name}: rewind: an earlier rewind of this data directory stopped after it began rewriting it`);
    const up = this.peer(source.connUrl);
    // Like pg_rewind, it stops before touching the target when it cannot reach the source.
    const unreachable = (why: string) => new DatabaseError('rewind_source_unreachable', `${this.name}: rewind: source server ${source.name} ${why}`);
    if (!up || !up.running || !up.data || up.frozen) throw unreachable('is not reachable');
    if (up.data.systemId !== data.systemId) this.fail('rewind', 'source and target clusters are from different systems');
    await this.pause('rewind');
    if (!up.running || !up.data) {
      // pg_rewind rewrites the target as it copies: a source lost on the way leaves it half done.
      data.halfRewound = true;
      throw new DatabaseError('rewind_interrupted', `${this.name}: rewind: source server ${source.name} went away while the data directory was being rewritten`);
    }
    // pg_rewind copies what differs and leaves the target to replay the source's WAL: it ends where the source is.
    data.records = up.data.records.slice();
    data.replayed = data.records.length;
    data.history = up.data.history.slice();
    data.recovery = { standby: true, upstreamConnUrl: source.connUrl, slotName: data.recovery.slotName };
    this.stateValue = 'stopped';
  }

  /** Copies `source` whatever the methods (the fake has no backup tools); without a source it fails like every method would. */
  async createReplica(source: Upstream | null, opts: CreateReplicaOptions = {}): Promise<void> {
    // A base backup over the node's own data empties the directory first, whether or not the copy then succeeds.
    const replaced = () => {
      if (!opts.replacing || this.running) return;
      this.data = null;
      this.slotMap.clear();
    };
    if (this.takeFailure('createReplica')) {
      replaced();
      if (!this.running) this.stateValue = 'stopped';
      this.fail('createReplica', 'injected failure');
    }
    if (this.running) this.fail('createReplica', 'server is running');
    replaced();
    if (this.data) throw new DatabaseError('data_dir_not_empty', `${this.name}: createReplica: data directory is not empty`);
    if (source === null) this.fail('createReplica', 'no server to copy from, and no method that needs none');
    const up = this.peer(source.connUrl);
    if (!up || !up.running || !up.data || up.frozen) {
      this.stateValue = 'stopped';
      throw new DatabaseError('create_replica_source_unreachable', `${this.name}: createReplica: source server ${source.name} is not reachable`);
    }
    this.stateValue = 'creating_replica';
    const generation = ++this.generation;
    await this.pause('createReplica');
    if (generation !== this.generation || !up.running || !up.data) {
      this.stateValue = 'stopped';
      this.fail('createReplica', `base backup from ${source.name} was interrupted`);
    }
    const records = up.data.records.slice();
    this.controlInRecovery = false;
    this.data = {
      systemId: up.data.systemId,
      records,
      replayed: records.length,
      history: up.data.history.slice(),
      recovery: { standby: true, upstreamConnUrl: source.connUrl, slotName: null },
    };
    this.stateValue = 'stopped';
  }

  async removeDataDirectory(): Promise<void> {
    this.injected('removeDataDirectory');
    if (this.running) this.fail('removeDataDirectory', 'server is running');
    await this.pause('removeDataDirectory');
    this.data = null;
    this.slotMap.clear();
    this.stateValue = 'stopped';
  }

  async checkpoint(): Promise<void> {
    this.injected('checkpoint');
    if (!this.running) this.fail('checkpoint', 'server is not running');
    await this.answering('checkpoint');
    await this.pause('checkpoint');
  }

  async configure(parameters: Readonly<Record<string, ParameterValue>>): Promise<void> {
    this.injected('configure');
    await this.pause('configure');
    this.configured = { ...parameters };
    if (this.running) this.applyReloadable();
  }

  async setSynchronousStandbyNames(value: string): Promise<void> {
    this.injected('setSynchronousStandbyNames');
    await this.answering('setSynchronousStandbyNames');
    await this.pause('setSynchronousStandbyNames');
    this.syncNames = value;
    if (!this.isWritable) return;
    for (const s of this.streamingStandbys()) if (this.priorityOf(s) > 0) s.pullFromUpstream();
    this.releaseWaiters();
  }

  async syncSlots(plan: SlotPlan): Promise<void> {
    this.injected('syncSlots');
    if (!this.running) this.fail('syncSlots', 'server is not running');
    await this.answering('syncSlots');
    await this.pause('syncSlots');
    const problems: string[] = [];
    // What the server holds: written on a primary, replayed on a standby (slots never point past it).
    const here = (this.inRecovery ? this.replayedLsn : this.lsn) ?? 0;
    for (const name of plan.drop) this.slotMap.delete(name);
    for (const c of plan.create) {
      if (this.slotMap.has(c.name)) continue;
      if (c.type === 'logical' && this.inRecovery) {
        problems.push(`create ${c.name}: logical decoding cannot be used while in recovery`);
        continue;
      }
      this.slotMap.set(c.name, {
        type: c.type,
        database: c.database ?? null,
        plugin: c.plugin ?? null,
        restartLsn: here,
        confirmedFlushLsn: c.type === 'logical' ? here : null,
      });
    }
    for (const a of plan.advance) {
      const slot = this.slotMap.get(a.name);
      if (!slot || this.slotActive(a.name)) continue;
      const to = Math.min(a.lsn, here);
      if (slot.type === 'physical' && to > slot.restartLsn) this.slotMap.set(a.name, { ...slot, restartLsn: to });
      if (slot.type === 'logical' && to > (slot.confirmedFlushLsn ?? 0)) this.slotMap.set(a.name, { ...slot, restartLsn: to, confirmedFlushLsn: to });
    }
    if (problems.length) this.fail('syncSlots', problems.join('; '));
  }

  async copyLogicalSlots(source: Upstream, names: readonly string[], timeoutMs: number): Promise<void> {
    this.injected('copyLogicalSlots');
    const power = this.epochs();
    if (!this.running || !this.inRecovery) this.fail('copyLogicalSlots', 'the server is not a running replica');
    await this.answering('copyLogicalSlots');
    const up = this.peer(source.connUrl);
    if (!up || !up.isWritable) this.fail('copyLogicalSlots', `${source.name} is not a running primary`);
    const copies = names.map((n) => [n, up.slotMap.get(n)] as const).filter((x): x is readonly [string, FakeSlot] => x[1]?.type === 'logical');
    if (!copies.length) this.fail('copyLogicalSlots', `${source.name} holds none of the logical slots ${names.join(', ')}`);
    await this.pause('copyLogicalSlots');
    // PostgreSQL loads slots at start only: the copy costs a restart.
    this.stateValue = 'stopping';
    this.shutdown(true);
    for (const [n, slot] of copies) this.slotMap.set(n, slot);
    await this.boot('copyLogicalSlots', timeoutMs, 'starting', power);
  }

  async terminateClientSessions(): Promise<void> {
    // Like PgDatabase it never fails: on a frozen server its query times out and nothing is terminated.
    if (this.frozen) {
      await this.clock.sleep(FROZEN_QUERY_MS);
      return;
    }
    this.terminated++;
    this.rejectWaiters('terminating connection due to administrator command');
  }

  async timelineHistory(): Promise<readonly HistoryLine[]> {
    return this.data ? this.data.history.slice() : [];
  }

  // ---------------------------------------------------------------- replication

  /**
   * Catches this replica up with its upstream when it can stream (upstream running, same
   * system, WAL a prefix of the upstream's). Returns whether WAL was received.
   * @internal used by the network and by upstreams.
   */
  pullFromUpstream(): boolean {
    const data = this.data;
    if (!this.running || !this.inRecovery || !data || this.frozen) return false;
    const url = data.recovery.upstreamConnUrl;
    // Archive recovery restores what the primary archived: modelled as reading from a running primary of the same system.
    const archive = !url && this.inArchiveRecovery ? this.network.all.find((d) => d !== this && d.isWritable && d.data?.systemId === data.systemId && isPrefix(data.records, d.data.records)) : undefined;
    const up = url ? this.peer(url) : archive;
    // A frozen upstream sends nothing; the connection stays until a timeout the fake does not model.
    if (up?.frozen) return false;
    const theirs = up && up !== this && up.running ? up.data : null;
    if (!theirs || theirs.systemId !== data.systemId || !isPrefix(data.records, theirs.records)) {
      this.streaming = false;
      return false;
    }
    this.streaming = true;
    let moved = false;
    if (!this.replicationPaused) {
      const limit = (up!.lsn ?? 0) - this.replicationLagBytes;
      for (let i = data.records.length; i < theirs.records.length && theirs.records[i]!.endLsn <= limit; i++) {
        data.records.push(theirs.records[i]!);
        moved = true;
      }
    }
    if (!this.replayPaused) data.replayed = data.records.length;
    // The replica fetches the history files of the timelines it follows.
    const tl = this.timeline!;
    data.history = theirs.history.filter((line) => line[0] < tl);
    if (moved) up!.releaseWaiters();
    return moved;
  }

  /** The server at `connUrl` when this one reaches it (undefined: none there, or a cut between them). */
  private peer(connUrl: string): FakeDatabase | undefined {
    const other = this.network.get(connUrl);
    return other !== undefined && this.network.linked(this, other) ? other : undefined;
  }

  /** Standbys connected to this server with compatible WAL. */
  private streamingStandbys(): FakeDatabase[] {
    const data = this.data;
    if (!data) return [];
    return this.network.all
      .filter(
        (s) =>
          s !== this &&
          s.running &&
          s.inRecovery &&
          s.streaming &&
          s.data !== null &&
          s.data.recovery.upstreamConnUrl === this.connUrl &&
          this.network.linked(this, s) &&
          s.data.systemId === data.systemId &&
          isPrefix(s.data.records, data.records),
      )
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  private priorityOf(s: FakeDatabase): number {
    const spec = parseSyncNames(this.syncNames);
    return spec ? syncPriority(spec, s.name) : 0;
  }

  /** The standbys that currently count as synchronous, in priority order (FIRST), or every listed one (ANY). */
  private syncCandidates(): { readonly method: 'first' | 'any'; readonly num: number; readonly standbys: FakeDatabase[] } | null {
    const spec = parseSyncNames(this.syncNames);
    if (!spec) return null;
    const listed = this.streamingStandbys()
      .map((s) => ({ s, p: syncPriority(spec, s.name) }))
      .filter((x) => x.p > 0)
      .sort((a, b) => a.p - b.p || (a.s.name < b.s.name ? -1 : 1))
      .map((x) => x.s);
    return { method: spec.method, num: spec.num, standbys: listed };
  }

  private isAcknowledgeable(lsn: number): boolean {
    const c = this.syncCandidates();
    if (!c) return true;
    if (c.method === 'first') {
      const sync = c.standbys.slice(0, c.num);
      return sync.length === c.num && sync.every((s) => (s.lsn ?? 0) >= lsn);
    }
    return c.standbys.filter((s) => (s.lsn ?? 0) >= lsn).length >= c.num;
  }

  private releaseWaiters(): void {
    while (this.waiters.length && this.isWritable && this.isAcknowledgeable(this.waiters[0]!.record.endLsn)) {
      const w = this.waiters.shift()!;
      this.acknowledge(w.record);
      w.resolve(w.record.endLsn);
    }
  }

  private rejectWaiters(reason: string): void {
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) {
      w.reject(new DatabaseError('write_failed', `${this.name}: ${reason}; commit of record ${w.record.id} is in doubt`));
    }
  }

  private acknowledge(record: WalRecord): void {
    const w: AcknowledgedWrite = { id: record.id, lsn: record.endLsn, timeline: record.timeline, by: this.name };
    this.acked.push(w);
    this.network.recordAcknowledged(w);
  }

  private replicationRows(): ReplicationRow[] {
    const c = this.syncCandidates();
    const syncSet = new Set(c && c.method === 'first' ? c.standbys.slice(0, c.num) : []);
    return this.streamingStandbys().map((s) => {
      const priority = this.priorityOf(s);
      let syncState = 'async';
      if (priority > 0) syncState = c!.method === 'any' ? 'quorum' : syncSet.has(s) ? 'sync' : 'potential';
      return {
        usename: 'replicator',
        application_name: s.name,
        client_addr: '127.0.0.1',
        state: 'streaming',
        sync_state: syncState,
        sync_priority: c?.method === 'any' ? (priority > 0 ? 1 : 0) : priority,
        write_lsn: s.lsn,
        flush_lsn: s.lsn,
        replay_lsn: s.replayedLsn,
      };
    });
  }

  // ---------------------------------------------------------------- lifecycle internals

  /** Starts the postmaster per the data directory's recovery settings; honours the start delay and `timeoutMs`. */
  private async boot(op: FakeDatabaseOp, timeoutMs: number, transitional: DatabaseState, epochs: { readonly power: number; readonly agent: number }): Promise<void> {
    // pg_ctl died with the machine: what it was still to do never happens.
    if (epochs.power !== this.powerEpoch) {
      this.stateValue = this.powerOffState;
      this.fail(op, 'the machine went down');
    }
    // The agent that was to launch the server is gone: nothing launches it.
    if (epochs.agent !== this.agentEpoch) {
      if (!this.running && (this.stateValue === transitional || this.stateValue === 'stopping')) this.stateValue = 'stopped';
      this.fail(op, 'the agent died before it started the server');
    }
    if (this.data?.halfRewound) {
      this.stateValue = transitional === 'restarting' ? 'restart_failed' : 'start_failed';
      this.fail(op, 'a rewind of this data directory stopped after it began rewriting it: it must be reinitialized, not started');
    }
    const generation = ++this.generation;
    this.stateValue = transitional;
    const finish = () => {
      const data = this.data;
      if (generation !== this.generation || !data) return;
      this.running = true;
      this.shutdownLsn = null;
      this.inRecovery = data.recovery.standby || data.fenceHold === true;
      this.controlInRecovery = this.inRecovery;
      this.streaming = false;
      this.startedAt = this.clock.now();
      this.applied = { ...this.configured };
      // Crash recovery replays all local WAL before connections are accepted.
      data.replayed = data.records.length;
      this.stateValue = 'running';
      if (this.inRecovery) this.pullFromUpstream();
    };
    const delay = this.delays.get('start') ?? 0;
    if (delay > timeoutMs) {
      await this.clock.sleep(timeoutMs);
      if (generation === this.generation) {
        this.stateValue = 'starting';
        void this.clock.sleep(delay - timeoutMs).then(finish);
      }
      this.fail(op, `server did not accept connections within ${timeoutMs} ms (still starting)`);
    }
    if (delay > 0) await this.clock.sleep(delay);
    if (generation !== this.generation) this.fail(op, 'start was interrupted');
    finish();
  }

  /** Takes the postmaster down; `clean` (smart/fast) lets connected standbys receive all WAL first. */
  async shutdownCheckpoint(): Promise<number | null> {
    return this.running ? null : this.shutdownLsn;
  }

  private shutdown(clean: boolean): void {
    this.generation++;
    this.shuttingDown = false;
    this.frozen = false;
    this.pendingSignals = { stop: null, promote: null };
    const waiting = this.thawWaiters;
    this.thawWaiters = [];
    for (const w of waiting) w.reject(new DatabaseError('write_failed', `${this.name}: server closed the connection unexpectedly; the commit never started`));
    this.shutdownLsn = this.running && clean && !this.inRecovery ? this.lsn : null;
    if (this.running && clean && !this.inRecovery) for (const s of this.streamingStandbys()) s.pullFromUpstream();
    this.rejectWaiters(clean ? 'the database system is shutting down' : 'server closed the connection unexpectedly');
    this.running = false;
    this.inRecovery = false;
    this.streaming = false;
    this.startedAt = null;
  }

  private finishPromote(generation: number): boolean {
    const data = this.data;
    if (generation !== this.generation || !data || !this.running || !this.inRecovery) return false;
    data.replayed = data.records.length;
    const oldTimeline = this.timeline!;
    const switchLsn = this.lsn!;
    data.history = [...data.history, Object.freeze([oldTimeline, switchLsn, 'no recovery target specified', null, null] as const)];
    data.records.push({
      id: this.network.nextRecordId(),
      endLsn: switchLsn + END_OF_RECOVERY_BYTES,
      timeline: oldTimeline + 1,
      at: this.clock.now(),
      kind: 'end_of_recovery',
    });
    data.replayed = data.records.length;
    data.recovery = { standby: false, upstreamConnUrl: null, slotName: null };
    data.fenceHold = false;
    this.inRecovery = false;
    this.controlInRecovery = false;
    this.streaming = false;
    return true;
  }

  /** Applies configured parameters that a reload can change (not those of context postmaster). */
  private applyReloadable(): void {
    const next: Record<string, ParameterValue> = {};
    for (const [k, v] of Object.entries(this.applied)) if (k in POSTMASTER_DEFAULTS) next[k] = v;
    for (const [k, v] of Object.entries(this.configured)) if (!(k in POSTMASTER_DEFAULTS)) next[k] = v;
    this.applied = next;
  }

  private pendingChanges(): Record<string, PendingChange> {
    const out: Record<string, PendingChange> = {};
    for (const name of Object.keys(POSTMASTER_DEFAULTS)) {
      const oldValue = settingText(this.applied[name]) ?? POSTMASTER_DEFAULTS[name]!;
      const newValue = settingText(this.configured[name]) ?? POSTMASTER_DEFAULTS[name]!;
      if (oldValue !== newValue) out[name] = { old_value: oldValue, new_value: newValue };
    }
    return out;
  }

  private facts(): LocalFacts {
    const data = this.data;
    // A postmaster that runs without answering: PgDatabase reports the state it last knew, and nothing else.
    if (this.frozen) return stoppedFacts(this.stateValue, data !== null);
    if (!this.running || !data) {
      return {
        ...stoppedFacts(this.stateValue, data !== null),
        // pg_controldata reads these from a stopped data directory.
        systemIdentifier: data?.systemId ?? null,
        // standby.signal: the data was last set up as a replica's.
        ...(data ? { stoppedAsReplica: data.recovery.standby } : {}),
        ...(data?.bootstrapUnfinished ? { bootstrapUnfinished: true } : {}),
        upstreamConnUrl: data?.recovery.upstreamConnUrl ?? null,
        synchronousStandbyNames: this.syncNames,
      };
    }
    const replica = this.inRecovery;
    const replayed = data.records[data.replayed - 1]!;
    const pending = this.pendingChanges();
    return {
      state: this.stateValue,
      initialized: true,
      running: true,
      inRecovery: replica,
      systemIdentifier: data.systemId,
      serverVersion: this.serverVersion,
      postmasterStartTime: iso(this.startedAt!),
      timeline: this.timeline,
      // The fake has no checkpoints: its control file always shows the timeline it runs on.
      checkpointTimeline: this.timeline,
      walLocation: replica ? null : this.lsn,
      receivedLocation: replica ? this.lsn : null,
      replayedLocation: replica ? replayed.endLsn : null,
      replayedTimestamp: replica ? iso(replayed.at) : null,
      replayPaused: replica && this.replayPaused,
      replicationState: replica && this.streaming && data.recovery.upstreamConnUrl ? 'streaming' : replica && this.inArchiveRecovery ? 'in archive recovery' : null,
      replication: replica ? [] : this.replicationRows(),
      upstreamConnUrl: replica ? data.recovery.upstreamConnUrl : null,
      upstreamSlotName: replica ? data.recovery.slotName : null,
      pendingRestart: Object.keys(pending).length > 0,
      pendingRestartReason: pending,
      synchronousStandbyNames: this.syncNames,
      slots: this.slotFacts(),
      ...(data.bootstrapUnfinished ? { bootstrapUnfinished: true } : {}),
    };
  }

  private slotFacts(): SlotFact[] {
    return [...this.slotMap]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, s]) => ({
        name,
        type: s.type,
        database: s.database,
        plugin: s.plugin,
        active: this.slotActive(name),
        restartLsn: s.restartLsn,
        confirmedFlushLsn: s.confirmedFlushLsn,
        hasXmin: false,
      }));
  }

  // ---------------------------------------------------------------- faults

  private takeFailure(op: FakeDatabaseOp): boolean {
    const left = this.failures.get(op) ?? 0;
    if (left <= 0) return false;
    if (left === 1) this.failures.delete(op);
    else this.failures.set(op, left - 1);
    return true;
  }

  private injected(op: FakeDatabaseOp): void {
    if (this.takeFailure(op)) this.fail(op, 'injected failure');
  }

  /** A query to a frozen server: the caller's timeout fails it (after FROZEN_QUERY_MS). */
  private async answering(op: FakeDatabaseOp): Promise<void> {
    if (!this.frozen) return;
    await this.clock.sleep(FROZEN_QUERY_MS);
    if (this.frozen) this.fail(op, 'the server does not answer');
  }

  /**
   * Stops a frozen server as PgDatabase does: the signal waits for the thaw; an immediate
   * stop, or one with a timeout (escalated to immediate), kills the processes once its wait
   * is over; one without a timeout gives up after the hard limit with the server still there.
   */
  private async stopFrozen(mode: StopMode, timeoutMs: number | undefined, op: FakeDatabaseOp): Promise<void> {
    const generation = this.generation;
    this.pendingSignals.stop = generation;
    const kills = mode === 'immediate' || timeoutMs !== undefined;
    const waitMs = mode === 'immediate' ? IMMEDIATE_SHUTDOWN_GRACE_MS : timeoutMs !== undefined ? timeoutMs + IMMEDIATE_SHUTDOWN_GRACE_MS : STOP_HARD_LIMIT_MS;
    // Polled, as PgDatabase waits for the postmaster: a thaw (the pending shutdown) or a crash ends the wait.
    const deadline = this.clock.now() + waitMs;
    while (generation === this.generation && this.clock.now() < deadline) await this.clock.sleep(Math.min(FROZEN_POLL_MS, deadline - this.clock.now()));
    // Thawed meanwhile (it shut down on the pending signal), or crashed: down either way.
    if (generation !== this.generation || !this.running) {
      this.stateValue = 'stopped';
      return;
    }
    if (!kills) {
      this.stateValue = 'stop_failed';
      this.fail(op, 'postmaster still running');
    }
    this.shutdown(false);
    this.stateValue = 'stopped';
  }

  private async pause(op: FakeDatabaseOp): Promise<void> {
    const ms = this.delays.get(op) ?? 0;
    if (ms > 0) await this.clock.sleep(ms);
  }

  private fail(op: FakeDatabaseOp, message: string): never {
    throw new DatabaseError(ERROR_CODES[op], `${this.name}: ${op}: ${message}`);
  }
}
