import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { HistoryLine } from '../../domain/cluster/model/cluster.js';
import type { ParameterValue } from '../../domain/cluster/config/config.js';
import type { LocalServerConfig } from '../../domain/cluster/config/local-server-config.js';
import { stoppedFacts, type LocalFacts, type ReceiverError } from '../../domain/cluster/model/facts.js';
import { receiverErrorOf } from './pg-receiver-error.js';
import { serverLogExcerpt } from './server-log-excerpt.js';
import { DatabaseError, type DatabaseErrorCode } from '../../domain/errors.js';
import type { CreateReplicaOptions, Database, InitdbOptions, PromoteOptions, StartOptions, StopMode, StopOptions, Upstream } from '../../ports/database.js';
import type { SlotPlan } from '../../domain/cluster/ha/decision.js';
import type { Logger } from '../../ports/logger.js';
import { endpointFromUrl } from './conninfo.js';
import { killDataDirProcesses, killPostmasterProcesses, knownPostmaster, processesOfPostmaster, serverProcessesInDataDir, waitForDataDirProcesses, type KnownPostmaster } from './data-dir-processes.js';
import { killPending } from './kill-pending.js';
import { IMMEDIATE_SHUTDOWN_GRACE_MS } from './shutdown-grace.js';
import { ensureOwnedDir, writeOwnedFile } from './owned-files.js';
import { DataDirectoryRefused, directoryEntries, emptyDirectory, refuseDatabaseWithoutControlFile, refuseExistingDatabase, refuseForeignFiles } from './data-directory.js';
import { bootstrapParams, bootstrapRecoverySettings, type CustomBootstrap } from './pg-custom-bootstrap.js';
import { connectFailed, createReplicaWithMethods, ReplicaMethodsFailed, runShellCommand } from './pg-replica-methods.js';
import { effectiveParameters, PgConfigFiles, type ConfigInput, type RecoveryTarget } from './pg-config-files.js';
import { readControlData, shutdownStateOf, standbyMinimumsOf } from './pg-controldata.js';
import { DB_SHUTDOWNED, readControlFile, stateName } from './pg-control-file.js';
import { formatLsn, parseLsn } from '../../domain/cluster/model/lsn.js';
import { PgCtl } from './pg-ctl.js';
import { postmasterAlive, readPostmasterPid } from './postmaster-pid.js';
import { initdbArguments } from './pg-initdb-args.js';
import { firstSocketDir, resolveOptions, type PgCredentials, type PgDatabaseOptions, type ResolvedPgOptions } from './pg-options.js';
import { observe, PendingRestartCache } from './pg-probe.js';
import { pgRewind } from './pg-rewind.js';
import { CommandFailure } from './run-command.js';
import { PgSession, withClient, type SessionLimits, type SessionTarget } from './pg-session.js';
import { applySlotPlan, oldestLocalWal, readLogicalSlots, writeLogicalSlots } from './pg-slots.js';
import { PgStateTracker } from './pg-state.js';
import { readTimelineHistory } from './pg-timeline-history.js';
import { pathExists } from './path-exists.js';
import { fenceHoldPresent } from './fence-hold.js';
import { readFileTail } from '../process/file-tail.js';

export type { PgDatabaseOptions } from './pg-options.js';

/** Control file states of a server last in recovery (a replica's data): shut down, or stopped (crashed) in recovery. */
const RECOVERY_STATES: ReadonlySet<string> = new Set(['shut down in recovery', 'in archive recovery']);
/** Marker of a pg_rewind under way, or stopped after it began rewriting (also one whose agent died during it): such a directory must be rebuilt, never started or rewound again. */
const REWIND_FAILED_MARKER = 'warden.rewind_failed';
/** What the marker says of the data directory. */
const REWIND_INTERRUPTED = 'a pg_rewind of this data directory stopped before it finished and may have rewritten part of it (PostgreSQL does not vouch for such a directory)';
/** Marker of a new cluster not yet registered after its post_bootstrap script: if it is still there outside the bootstrap, the bootstrap was interrupted. */
const BOOTSTRAP_UNFINISHED_MARKER = 'warden.bootstrap_unfinished';
/** What pg_rewind calls on its source, granted to a rewind role that is not the superuser. */
const REWIND_FUNCTIONS = ['pg_ls_dir(text, boolean, boolean)', 'pg_stat_file(text, boolean)', 'pg_read_binary_file(text)', 'pg_read_binary_file(text, bigint, bigint, boolean)'];
const PROBE_BUDGET_MS = 2_000;
/** How long a killed postmaster may take to be gone (a process in uninterruptible I/O dies only when that I/O ends). */
const KILLED_EXIT_WAIT_MS = 5_000;
/** How often a promotion checks whether the server has left recovery. */
const PROMOTE_POLL_MS = 10;
/** How often a promotion waiting for the old leader's last WAL checks the server's position. */
const CATCH_UP_POLL_MS = 2;
/**
 * A promotion not done after this long gets the startup process woken (SIGHUP), and again at
 * this pace: PostgreSQL 15 can see a promote request while a WAL receiver is still starting and
 * then sleep out the rest of wal_retrieve_retry_interval (5 s by default) before acting on it;
 * any wake-up ends that sleep and the promotion goes on. A normal promotion takes ~100 ms.
 */
const PROMOTE_NUDGE_MS = 250;
const PROBE_LIMITS: SessionLimits = { connectTimeoutMs: 1_000, statementTimeoutMs: 1_000 };
const MAINTENANCE_LIMITS: SessionLimits = { connectTimeoutMs: 5_000, statementTimeoutMs: 600_000 };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The error code of a failed launch: a custom bootstrap's recovery fails the bootstrap. */
function failCode(failed: 'start_failed' | 'restart_failed' | 'custom_bootstrap_failed'): DatabaseErrorCode {
  return failed === 'custom_bootstrap_failed' ? 'initdb_failed' : failed;
}

/** A custom bootstrap's recovery may replay a long archive: it is bounded only by the server giving up. */
const BOOTSTRAP_RECOVERY_LIMIT_MS = 7 * 24 * 3_600_000;

/** SQLSTATE 57P03: the postmaster is up but refuses connections (starting, or reinitializing after a crash). */
function cannotConnectNow(e: unknown): boolean {
  return (e as { code?: unknown }).code === '57P03';
}

/** PostgreSQL has no connection slot left for the agent's login (`too many clients already`, or only reserved slots left). */
function outOfConnectionSlots(e: unknown): boolean {
  return (e as { code?: unknown }).code === '53300';
}

/** Least time between two looks at the control file's hot-standby minimums from the probe. */
const MINIMUMS_CHECK_MS = 5000;

/** How long a replica goes without streaming before the probe reads the server log for why (the agent acts on it after 30 s). */
const RECEIVER_ERROR_AFTER_MS = 5000;

/** PostgreSQL refused the login itself (a wrong password, no pg_hba.conf line): asking again does not help. */
function loginRefused(e: unknown): boolean {
  const code = (e as { code?: unknown }).code;
  return code === '28P01' || code === '28000';
}

/** The server runs but refuses the agent's own login. */
class LoginRefused extends Error {
  constructor(user: string, cause: unknown) {
    super(`the server runs but refuses the agent's login as ${user} (check db.authentication.superuser and db.pg_hba)`, { cause });
  }
}

/**
 * Whether a failed rewind may have left the target half-rewritten: only pg_rewind itself
 * changes files, and only after it says where it rewinds from. A failure before that (no
 * source, a refused check, an address that is not one) leaves the data as it was.
 */
function targetMayBeHalfRewound(e: unknown): boolean {
  return e instanceof CommandFailure && /rewinding from last common checkpoint/i.test(`${e.stdout}\n${e.stderr}`);
}


/**
 * The Database port over a real PostgreSQL 15: pg_ctl/initdb/pg_basebackup/pg_rewind as the
 * server's OS user, observation through one long-lived `pg` connection, agent-owned
 * postgresql.conf and pg_hba.conf (see pg-config-files.ts). Operations run one at a time;
 * probe() runs beside them and reports the state they set.
 */
export class PgDatabase implements Database {
  private readonly o: ResolvedPgOptions;
  private readonly log: Logger;
  private readonly ctl: PgCtl;
  private readonly files: PgConfigFiles;
  private readonly session: PgSession;
  private readonly states = new PgStateTracker();
  private dynamic: Readonly<Record<string, ParameterValue>> = {};
  /** The local file's settings as last reloaded (configure); null: the options' own. */
  private local: LocalServerConfig | null = null;
  private syncNames: string | undefined;
  /** The hot-standby minimums of the control file (see readStandbyMinimums); null before the first read. */
  private minimums: Readonly<Record<string, number>> | null = null;
  /** Since when (epoch ms) the probe has seen this replica not streaming; null while it streams. */
  private notStreamingSince: number | null = null;
  /** The last probe could not log in because every connection slot was taken (SQLSTATE 53300): said once per episode. */
  private outOfSlots = false;
  /** The control file's mtime when minimumsMoved last looked, what it found and when (epoch ms); null: look again. */
  private minimumsSeen: { readonly mtimeMs: number; readonly moved: boolean; readonly at: number } | null = null;
  /** undefined until known: read back from the files on disk when needed. */
  private recovery: RecoveryTarget | null | undefined;
  /**
   * A custom bootstrap's recovery settings while that recovery runs, in every configuration
   * written meanwhile: configure() is not one of the exclusive operations, and a pass of the HA
   * loop that wrote the files without them would reload a restore_command away or take out
   * the target the recovery was started with.
   */
  private bootstrapRecovery: Pick<ConfigInput, 'recoveryParameters' | 'keepRecoveryTargets'> | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private controlCache: { mtimeMs: number; systemIdentifier: string | null; timeline: number | null; inRecovery: boolean } | null = null;
  /** The postmaster the last probe saw running (PID and start time), to find it again once postmaster.pid is out of reach. */
  private lastPostmaster: KnownPostmaster | null = null;
  private readonly pendingRestarts = new PendingRestartCache();
  private noSocketReported = false;

  constructor(options: PgDatabaseOptions) {
    this.o = resolveOptions(options);
    this.log = this.o.logger.child({ component: 'database' });
    this.ctl = new PgCtl(this.o.binDir, this.o.dataDir, this.o.runAsUser);
    this.files = new PgConfigFiles(this.o, this.log);
    this.session = new PgSession(() => this.target(), PROBE_LIMITS, this.log);
  }

  private async target(database?: string): Promise<SessionTarget> {
    return {
      host: (await this.socketDir()) ?? this.o.localHost,
      port: this.o.listenPort,
      user: this.o.superuser.username,
      ...(this.o.superuser.password ? { password: this.o.superuser.password } : {}),
      ...(database ? { database } : {}),
    };
  }

  /**
   * With `useUnixSocket`, the directory of the running server's Unix socket: the one it names
   * in postmaster.pid (what it listens on, whatever the files say since it started). Null:
   * TCP on loopback (no socket option, no server, or a server without a socket, said once).
   */
  private async socketDir(): Promise<string | null> {
    if (!this.o.useUnixSocket) return null;
    const pid = await readPostmasterPid(this.o.dataDir);
    if (pid === null) return null;
    const dir = firstSocketDir(pid.socketDir);
    // A server still starting has not written its socket lines yet: only one that is up and names none is worth a word.
    if (dir === null && (pid.status === 'ready' || pid.status === 'standby') && !this.noSocketReported) {
      this.noSocketReported = true;
      this.log.warn(`db.use_unix_socket is set but the server listens on no Unix socket directory (unix_socket_directories): connecting over TCP to ${this.o.localHost}`);
    }
    if (dir !== null) this.noSocketReported = false;
    return dir;
  }

  /** Runs operations one after the other; the state tracker knows one is running. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      this.states.beginOperation();
      try {
        return await fn();
      } finally {
        this.states.endOperation();
      }
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private fail(code: DatabaseErrorCode, message: string, cause?: unknown): DatabaseError {
    const full = cause === undefined ? message : `${message}: ${describe(cause)}`;
    // The caller reports it (once, with what it was doing): here only for debugging.
    this.log.debug(full, { code });
    return new DatabaseError(code, full, cause);
  }

  // ---------------------------------------------------------------- observation

  /** A cluster just created (initdb or a custom bootstrap): this node's files, as a stopped primary. */
  private async settleNewCluster(): Promise<void> {
    await this.files.write(this.configInput(null));
    await this.files.setStandby(false);
    this.recovery = null;
    this.controlCache = null;
    this.states.set('stopped');
  }

  async probe(): Promise<LocalFacts> {
    try {
      return await this.probeOnce();
    } catch (e) {
      this.log.warn('probe failed', { error: describe(e) });
      return stoppedFacts(this.states.current, false);
    }
  }

  /**
   * Why a paused replica cannot replay until it restarts: a setting PostgreSQL demands of a hot
   * standby is below the value its control file holds, which replay took from the primary (the
   * primary restarted with more max_connections first). Null for a pause of another kind (an
   * operator's pg_wal_replay_pause()). Asked only while replay is paused.
   */
  private async replayBlock(): Promise<string | null> {
    try {
      const minimums = await standbyMinimumsOf(this.o.binDir, this.o.dataDir, this.o.runAsUser);
      if (!minimums) return null;
      const rows = await this.session.query<{ name: string; setting: string }>('SELECT name, setting FROM pg_settings WHERE name = ANY($1)', [Object.keys(minimums)]);
      const low = rows.filter((r) => Number(r.setting) < minimums[r.name]!).map((r) => `${r.name} ${r.setting} is below ${minimums[r.name]} on the primary`);
      return low.length ? low.join(', ') : null;
    } catch (e) {
      this.log.debug('could not tell why replay is paused', { error: describe(e) });
      return null;
    }
  }

  /** Forgets since when the replica has not streamed (it streams, or is not a replica); null. */
  private clearNotStreaming(): null {
    this.notStreamingSince = null;
    return null;
  }

  /**
   * receiverError(), once the replica has not streamed for RECEIVER_ERROR_AFTER_MS: a replica
   * between two upstreams (a switchover) does not read the log on every probe for nothing.
   */
  private async receiverErrorOnceStuck(): Promise<ReceiverError | null> {
    this.notStreamingSince ??= Date.now();
    return Date.now() - this.notStreamingSince >= RECEIVER_ERROR_AFTER_MS ? this.receiverError() : null;
  }

  /**
   * The WAL receiver's last error from the server log (its tail), for a replica that does not
   * stream: only the log says why (pg_stat_wal_receiver has no row while it cannot connect).
   */
  private async receiverError(): Promise<ReceiverError | null> {
    const lines = (await this.logSince(0).catch(() => '')).split('\n').reverse();
    for (const line of lines) {
      const error = receiverErrorOf(line);
      if (error !== null) return error;
      // A receiver that streamed after the error: the error is history.
      if (/started streaming WAL from primary/.test(line)) return null;
    }
    return null;
  }

  private async probeOnce(): Promise<LocalFacts> {
    const started = Date.now();
    // At once: on a loaded machine every wait for the thread pool costs a scheduling delay, and a tick's probe is on the failover's path.
    const [initialized, pidFile, pid, unfinished] = await Promise.all([
      pathExists(join(this.o.dataDir, 'global', 'pg_control')),
      pathExists(join(this.o.dataDir, 'postmaster.pid')),
      this.ctl.livePid(),
      pathExists(join(this.o.dataDir, BOOTSTRAP_UNFINISHED_MARKER)),
    ]);
    const marked = unfinished ? { bootstrapUnfinished: true } : {};
    if (pid !== null && this.lastPostmaster?.pid !== pid) this.lastPostmaster = await knownPostmaster(pid);
    if (pid === null && !initialized && !pidFile && !this.states.operating) await this.killServerWithoutData();
    if (pid === null) {
      const state = this.states.observed({ alive: false, pidFile, answered: false, refusing: false });
      return { ...stoppedFacts(state, initialized), ...(initialized ? await this.controlFacts() : {}), ...marked };
    }
    let timer: NodeJS.Timeout | undefined;
    let overBudget = false;
    try {
      const budget = Math.max(100, PROBE_BUDGET_MS - (Date.now() - started) - 100);
      const obs = await Promise.race([
        observe(this.session, this.pendingRestarts),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            overBudget = true;
            reject(new Error(`no answer within ${budget} ms`));
          }, budget);
        }),
      ]);
      const state = this.states.observed({ alive: true, pidFile: true, answered: true, refusing: false });
      if (this.outOfSlots) {
        this.outOfSlots = false;
        this.log.info('the server takes the agent\'s connection again');
      }
      const replayBlockedBy = obs.inRecovery && obs.replayPaused ? await this.replayBlock() : null;
      const standbyMinimumsChanged = obs.inRecovery ? await this.minimumsMoved() : false;
      const receiverError = obs.inRecovery && obs.replicationState !== 'streaming' && obs.upstreamConnUrl !== null ? await this.receiverErrorOnceStuck() : this.clearNotStreaming();
      return { ...obs, replayBlockedBy, receiverError, standbyMinimumsChanged, state, initialized, running: true, ...marked };
    } catch (e) {
      // a query still hanging on the connection would block the next probe: start afresh
      if (overBudget) this.session.close();
      this.log.debug('server did not answer the probe', { error: describe(e) });
      if (outOfConnectionSlots(e) && !this.outOfSlots) {
        this.outOfSlots = true;
        // Otherwise it reads as a hung server, and is handled as one (a primary is stopped after primary_start_timeout).
        this.log.warn(
          'the server refuses the agent\'s connection: every connection slot is taken, the superusers\' reserved ones (superuser_reserved_connections) included; the agent cannot see into the server and handles it as one that does not answer: find who holds superuser connections (pg_stat_activity), or raise superuser_reserved_connections',
          { error: describe(e) },
        );
      }
      const state = this.states.observed({ alive: true, pidFile: true, answered: false, refusing: cannotConnectNow(e) });
      return { ...stoppedFacts(state, initialized), ...marked };
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * A server whose data directory was deleted (or emptied) under it runs on, a primary
   * acknowledging commits, until its own check notices a minute later, and nothing can stop it
   * through pg_ctl any more: with no operation of ours running, any PostgreSQL process still
   * working there is killed at once, before the HA loop gives up the leader key, so that a new
   * primary never runs beside it.
   */
  private async killServerWithoutData(): Promise<void> {
    // Also the postmaster last seen running, found by PID and start time: a data directory renamed or
    // lazily unmounted under it moves its processes' working directory (and postmaster.pid) out of reach.
    const known = this.lastPostmaster;
    const moved = known ? await processesOfPostmaster(known) : [];
    const pids = [...new Set([...(await serverProcessesInDataDir(this.o.dataDir)), ...moved])];
    if (pids.length === 0) {
      this.lastPostmaster = null;
      return;
    }
    this.log.error('PostgreSQL runs without its data directory (deleted, emptied, moved or unmounted under it): killing it', { pids, data_dir: this.o.dataDir });
    this.session.close();
    await killDataDirProcesses(this.o.dataDir);
    if (known && moved.length) await killPostmasterProcesses(known);
    this.lastPostmaster = null;
  }

  /**
   * System identifier and timeline of a stopped cluster, from the control file (re-read only
   * when pg_control changed; read directly, pg_controldata only for a layout not known).
   */
  private async controlFacts(): Promise<Partial<LocalFacts>> {
    try {
      const { mtimeMs } = await stat(join(this.o.dataDir, 'global', 'pg_control'));
      if (this.controlCache?.mtimeMs !== mtimeMs) {
        const cf = await readControlFile(this.o.dataDir);
        if (cf) {
          this.controlCache = { mtimeMs, systemIdentifier: cf.systemIdentifier, timeline: cf.timeline > 0 ? cf.timeline : null, inRecovery: RECOVERY_STATES.has(stateName(cf.state)) };
        } else {
          const cd = await readControlData(this.o.binDir, this.o.dataDir, this.o.runAsUser);
          const tli = Number(cd["Latest checkpoint's TimeLineID"]);
          this.controlCache = {
            mtimeMs,
            systemIdentifier: cd['Database system identifier'] ?? null,
            timeline: Number.isInteger(tli) && tli > 0 ? tli : null,
            inRecovery: RECOVERY_STATES.has(cd['Database cluster state'] ?? ''),
          };
        }
      }
      // A fence's hold makes a stopped primary start read-only; the data stays a primary's.
      const standby = (await pathExists(join(this.o.dataDir, 'standby.signal'))) && !(await fenceHoldPresent(this.o.dataDir));
      return { systemIdentifier: this.controlCache.systemIdentifier, timeline: this.controlCache.timeline, stoppedAsReplica: this.controlCache.inRecovery || standby };
    } catch {
      return {};
    }
  }

  async shutdownCheckpoint(): Promise<number | null> {
    const [pid, cf] = await Promise.all([readPostmasterPid(this.o.dataDir), readControlFile(this.o.dataDir)]);
    // A postmaster still exiting after its shutdown checkpoint says so in postmaster.pid; any other live one is running.
    if (pid !== null && pid.status !== 'stopping' && (await postmasterAlive(pid.pid))) return null;
    if (cf) return cf.state === DB_SHUTDOWNED ? cf.checkpointLsn : null;
    const cd = await readControlData(this.o.binDir, this.o.dataDir, this.o.runAsUser).catch(() => null);
    if (!cd || cd['Database cluster state'] !== 'shut down') return null;
    return parseLsn(cd['Latest checkpoint location'] ?? '') ?? null;
  }

  async timelineHistory(): Promise<readonly HistoryLine[]> {
    return readTimelineHistory(this.o.dataDir);
  }

  // ---------------------------------------------------------------- process control

  initdb(opts: InitdbOptions = {}): Promise<void> {
    const custom = this.o.customBootstrap;
    if (custom) return this.exclusive(() => this.customBootstrap(custom, opts));
    return this.exclusive(async () => {
      this.states.set('initdb');
      let pwDir: string | null = null;
      // Outside the try: its clean-up empties the directory, which must never reach files the agent did not make.
      await this.refuseNonEmpty('initdb_failed', 'initdb');
      try {
        await ensureOwnedDir(this.o.dataDir, this.o.runAsUser);
        const args = [...initdbArguments(this.o.initdbOptions), '-U', this.o.superuser.username, '--no-instructions'];
        if (this.o.superuser.password) {
          // In a folder of its own with an unpredictable name, only the server's user may enter.
          pwDir = await mkdtemp(join(tmpdir(), 'warden-initdb-'));
          await ensureOwnedDir(pwDir, this.o.runAsUser);
          const pwFile = join(pwDir, 'pw');
          await writeOwnedFile(pwFile, `${this.o.superuser.password}\n`, this.o.runAsUser);
          args.push(`--pwfile=${pwFile}`);
        }
        await this.ctl.initdb(args);
        if (opts.unfinished) await this.markUnfinished();
        await this.settleNewCluster();
      } catch (e) {
        await emptyDirectory(this.o.dataDir).catch(() => undefined);
        this.states.set('initdb_failed');
        throw this.fail('initdb_failed', 'initdb failed', e);
      } finally {
        if (pwDir) await rm(pwDir, { recursive: true, force: true });
      }
    });
  }

  /**
   * A custom bootstrap (bootstrap.method): the operator's command fills the empty data
   * directory (a restore from a backup, typically), our configuration files are put in place,
   * and with recovery settings (recovery_conf, or the command's own recovery.signal with
   * keep_existing_recovery_conf) the server recovers until it promotes, then stops: the HA
   * loop starts it as the primary under the leader key. Without them any recovery signal the
   * command left is removed. On failure the directory is emptied (it holds only what this
   * bootstrap wrote) and the state says `custom bootstrap failed`.
   */
  private async customBootstrap(method: CustomBootstrap, opts: InitdbOptions): Promise<void> {
    this.states.set('custom_bootstrap');
    await this.refuseNonEmpty('custom_bootstrap_failed', `custom bootstrap ${method.name}`);
    try {
      await ensureOwnedDir(this.o.dataDir, this.o.runAsUser);
      this.log.info('running the custom bootstrap', { method: method.name });
      await runShellCommand(this.o, method.command, bootstrapParams(method, this.o.scope, this.o.dataDir), 0);
      if (!(await pathExists(join(this.o.dataDir, 'global', 'pg_control')))) throw new Error('the command succeeded but left no database in the data directory');
      if (opts.unfinished) await this.markUnfinished();
      this.controlCache = null;
      const settings = bootstrapRecoverySettings(method);
      const keep = method.keep_existing_recovery_conf === true && (await this.files.hasRecoverySignal());
      if (method.keep_existing_recovery_conf === true && !keep && (await this.files.hasStandbySignal())) {
        throw new Error('keep_existing_recovery_conf: the command left standby.signal, whose recovery never ends; leave recovery.signal, or give recovery_conf');
      }
      if (settings || keep) {
        // A point-in-time restore (pgBackRest --type=time, Barman --target-time) names its
        // target in postgresql.auto.conf, which every write of the files otherwise cleans:
        // without it the server would replay the whole archive, past what the restore was for.
        this.bootstrapRecovery = {
          ...(settings ? { recoveryParameters: settings } : {}),
          ...(method.keep_existing_recovery_conf === true ? { keepRecoveryTargets: true } : {}),
        };
        await this.files.write(this.configInput(null));
        if (settings) await this.files.setRecoverySignal();
        await this.launch(BOOTSTRAP_RECOVERY_LIMIT_MS, 'bootstrap_starting', 'custom_bootstrap_failed');
        this.states.set('bootstrap_starting');
        while (await this.inRecovery()) {
          // A target the archive never reaches stops the server (FATAL): the bootstrap fails rather than promote elsewhere.
          if ((await this.ctl.livePid()) === null) throw new Error('the server stopped before its recovery ended (a recovery target never reached? see the server log)');
          await sleep(200);
        }
        this.log.info('the custom bootstrap\'s recovery ended with a promotion');
        await this.stopNow('fast', undefined, 'initdb_failed');
        this.bootstrapRecovery = null;
        // Its work is done; left in place, the next recovery of this data (a replica's after a failover) would stop there again.
        const dropped = await this.files.dropRecoveryTargets();
        if (dropped.length) this.log.info(`the custom bootstrap's ${dropped.join(', ')} taken out of postgresql.auto.conf: its recovery is over`);
      }
      // Our files without the recovery settings (and without any signal file the command left
      // when nothing asked for its recovery); PostgreSQL removed recovery.signal when it promoted.
      await this.settleNewCluster();
    } catch (e) {
      this.bootstrapRecovery = null;
      const pid = await this.ctl.livePid().catch(() => null);
      if (pid !== null) await this.stopNow('immediate', undefined, 'initdb_failed').catch(() => undefined);
      await emptyDirectory(this.o.dataDir).catch(() => undefined);
      this.states.set('custom_bootstrap_failed');
      throw e instanceof DatabaseError ? e : this.fail('initdb_failed', `custom bootstrap ${method.name} failed`, e);
    }
  }

  /** Marks the new data unfinished: its post_bootstrap script has yet to succeed, and the cluster to be registered. */
  private async markUnfinished(): Promise<void> {
    await writeOwnedFile(join(this.o.dataDir, BOOTSTRAP_UNFINISHED_MARKER), 'this new cluster is not registered yet: its post_bootstrap script has not succeeded, or its registration not done\n', this.o.runAsUser);
  }

  clearBootstrapMark(): Promise<void> {
    return this.exclusive(async () => {
      try {
        await rm(join(this.o.dataDir, BOOTSTRAP_UNFINISHED_MARKER), { force: true });
      } catch (e) {
        throw this.fail('initdb_failed', 'could not mark the new cluster finished', e);
      }
    });
  }

  start(opts: StartOptions): Promise<void> {
    return this.exclusive(async () => {
      try {
        const recovery: RecoveryTarget | null = opts.upstream
          ? { upstream: endpointFromUrl(opts.upstream.connUrl), ...(opts.slotName ? { slotName: opts.slotName } : {}) }
          : opts.standby
            ? { upstream: null }
            : null;
        if ((await this.ctl.livePid()) !== null) {
          // Done, unless the server refuses the agent's login: the start that left it so failed, and must keep failing (and backing off), not loop.
          const refused = await this.session.query('SELECT 1').then(
            () => null,
            (e: unknown) => (loginRefused(e) ? e : null),
          );
          if (refused !== null) throw new LoginRefused(this.o.superuser.username, refused);
          this.log.info('start requested but the server is already running');
          return;
        }
        await this.writeRole(recovery);
      } catch (e) {
        this.states.set('start_failed');
        if (e instanceof LoginRefused) throw this.fail('start_failed', e.message, e.cause);
        throw this.fail('start_failed', 'could not prepare the start', e);
      }
      await this.launch(opts.timeoutMs, 'starting', 'start_failed');
    });
  }

  /** Writes the configuration and standby.signal for `recovery` (null: primary). */
  private async writeRole(recovery: RecoveryTarget | null): Promise<boolean> {
    await this.readStandbyMinimums(recovery);
    const changed = await this.files.write(this.configInput(recovery));
    await this.files.setStandby(recovery !== null);
    this.recovery = recovery;
    return changed;
  }

  private configInput(recovery: RecoveryTarget | null) {
    return {
      ...this.bootstrapRecovery,
      dynamic: this.dynamic,
      recovery,
      ...(this.local !== null ? { local: this.local } : {}),
      ...(this.syncNames !== undefined ? { synchronousStandbyNames: this.syncNames } : {}),
      ...(recovery !== null && this.minimums ? { standbyMinimums: this.minimums } : {}),
    };
  }

  /**
   * Reads, for a server about to run in recovery, the values PostgreSQL demands of a hot
   * standby (its control file holds the primary's): lowering a parameter on the cluster then
   * never keeps a replica from starting before the primary has restarted with the new value.
   */
  private async readStandbyMinimums(recovery: RecoveryTarget | null): Promise<void> {
    if (recovery === null) return;
    const minimums = await standbyMinimumsOf(this.o.binDir, this.o.dataDir, this.o.runAsUser);
    if (minimums) this.minimums = minimums;
    this.minimumsSeen = null;
  }

  /**
   * Whether the control file's hot-standby minimums moved away from those the configuration
   * was written with (replay of the primary's parameter change): looked at again only when
   * pg_control changed (a restartpoint, a parameter change), read directly.
   */
  private async minimumsMoved(): Promise<boolean> {
    const written = this.minimums;
    if (written === null) return false;
    // At most every few seconds: the probe runs on the failover's path, and this is no hurry.
    const seen = this.minimumsSeen;
    if (seen !== null && Date.now() - seen.at < MINIMUMS_CHECK_MS) return seen.moved;
    const mtimeMs = await stat(join(this.o.dataDir, 'global', 'pg_control')).then((st) => st.mtimeMs, () => null);
    if (mtimeMs === null) return false;
    let moved = seen?.moved ?? false;
    if (seen?.mtimeMs !== mtimeMs) {
      const now = (await readControlFile(this.o.dataDir).catch(() => null))?.standbyMinimums ?? null;
      moved = now !== null && Object.entries(now).some(([k, v]) => written[k] !== v);
    }
    this.minimumsSeen = { mtimeMs, moved, at: Date.now() };
    return moved;
  }

  /**
   * A new database is built only in an empty data directory. What an interrupted initdb or
   * base backup left (PostgreSQL's own names, no control file) is cleared first; files the
   * agent did not make are left alone and the build fails, saying which.
   */
  private async refuseNonEmpty(failed: 'initdb_failed' | 'custom_bootstrap_failed', what: string): Promise<void> {
    try {
      await refuseForeignFiles(this.o.dataDir);
      await refuseExistingDatabase(this.o.dataDir);
      await refuseDatabaseWithoutControlFile(this.o.dataDir, this.o.name);
      if ((await directoryEntries(this.o.dataDir)).length) {
        this.log.warn('clearing what an interrupted build left in the data directory', { data_dir: this.o.dataDir });
        await emptyDirectory(this.o.dataDir);
      }
    } catch (e) {
      this.states.set(failed);
      throw this.fail(e instanceof DataDirectoryRefused ? 'data_dir_not_empty' : 'initdb_failed', `${what} failed`, e);
    }
  }

  /** Launches the postmaster and waits until it accepts connections; sets `during` then running or `failed`. */
  private async launch(
    timeoutMs: number,
    during: 'starting' | 'restarting' | 'bootstrap_starting',
    failed: 'start_failed' | 'restart_failed' | 'custom_bootstrap_failed',
  ): Promise<void> {
    this.states.set(during);
    const deadline = Date.now() + timeoutMs;
    let logOffset = 0;
    try {
      if (await pathExists(join(this.o.dataDir, REWIND_FAILED_MARKER))) {
        throw new Error(`${REWIND_INTERRUPTED}: it must be reinitialized, not started`);
      }
      await this.clearCrashLeftovers(Math.min(10_000, Math.max(0, timeoutMs)));
      this.session.close();
      // Created when missing; an existing one (say /var/log/postgresql) is the operator's and left as it is.
      if (!(await pathExists(dirname(this.o.logFile)))) await ensureOwnedDir(dirname(this.o.logFile), this.o.runAsUser);
      logOffset = await stat(this.o.logFile).then((st) => st.size, () => 0);
      await this.ctl.launch(this.o.logFile);
    } catch (e) {
      this.states.set(failed);
      throw this.fail(failCode(failed), 'could not launch the server', e);
    }
    let seenPid = false;
    let lastError: unknown;
    const launchedAt = Date.now();
    for (;;) {
      const pid = await this.ctl.livePid();
      if (pid !== null) {
        seenPid = true;
        try {
          const [row] = await this.session.query<{ in_recovery: boolean }>('SELECT pg_is_in_recovery() AS in_recovery');
          this.states.set('running');
          if (row && !row.in_recovery) {
            await this.ensureReplicationRole();
            await this.ensureRewindRole();
          }
          return;
        } catch (e) {
          lastError = e;
          // The server is up but refuses the agent's own login: asking again every 50 ms until the
          // timeout only fills its log. It keeps running; the failure says why at once.
          if (loginRefused(e)) {
            this.states.set(failed);
            const refused = new LoginRefused(this.o.superuser.username, e);
            throw this.fail(failCode(failed), refused.message, e);
          }
        }
      } else if (seenPid || Date.now() - launchedAt > 5_000 || /\b(FATAL|PANIC):/.test(await this.logSince(logOffset))) {
        this.states.set(failed);
        const log = serverLogExcerpt(await this.logSince(logOffset), 15).join('\n');
        throw this.fail(failCode(failed), `the server exited during start-up${log ? `; server log:\n${log}` : ''}`);
      }
      if (Date.now() >= deadline) {
        // the server keeps starting: the probe reports `running` once it answers
        throw this.fail(failCode(failed), `the server did not accept connections within ${timeoutMs} ms (${describe(lastError)})`);
      }
      await sleep(50);
    }
  }

  /** Makes a data directory whose postmaster died startable again (by us or by pg_rewind's single-user run). */
  private async clearCrashLeftovers(timeoutMs: number): Promise<void> {
    // survivors of a killed postmaster hold its shared memory: a new one would refuse to start
    if (!(await waitForDataDirProcesses(this.o.dataDir, timeoutMs))) {
      const left = await serverProcessesInDataDir(this.o.dataDir);
      const stuck = (await Promise.all(left.map(killPending))).every(Boolean);
      throw new Error(
        stuck && left.length
          ? `processes of a previous server (${left.join(', ')}) are stuck in the kernel (a hung disk or mount?) with SIGKILL pending: the server can start once they are gone`
          : 'processes of a previous server still run in the data directory',
      );
    }
    await this.removeStalePidFile();
  }

  /**
   * A postmaster.pid whose PID is dead (or a zombie its parent has not reaped yet, which
   * PostgreSQL's own check takes for alive) would make the new postmaster refuse to start.
   */
  private async removeStalePidFile(): Promise<void> {
    const pidFile = await readPostmasterPid(this.o.dataDir);
    if (!pidFile || (await postmasterAlive(pidFile.pid))) return;
    this.log.info('removing a stale postmaster.pid', { pid: pidFile.pid });
    // the socket lock files carry the same dead PID and would stop the new postmaster too
    const socketDirs = new Set<string>(pidFile.socketDir ? [pidFile.socketDir] : []);
    const configured = effectiveParameters(this.o, this.configInput(null))['unix_socket_directories'];
    if (typeof configured === 'string') for (const d of configured.split(',')) if (d.trim()) socketDirs.add(d.trim());
    for (const dir of socketDirs) {
      const lock = join(dir, `.s.PGSQL.${pidFile.port || this.o.listenPort}.lock`);
      const owner = Number((await readFile(lock, 'utf8').catch(() => '')).split('\n')[0]);
      if (owner === pidFile.pid) await rm(lock, { force: true });
    }
    await rm(join(this.o.dataDir, 'postmaster.pid'), { force: true });
  }

  /**
   * pg_ctl reload (or `signal`), then wait (bounded) until our own session has re-read the files: after
   * that, pg_settings (pending_restart included) and every setting show the new state.
   */
  private async reloadAndWait(signal: () => Promise<void> = () => this.ctl.reload()): Promise<void> {
    const loadTime = async () => (await this.session.query<{ t: string }>('SELECT pg_conf_load_time()::text AS t'))[0]?.t ?? '';
    const before = await loadTime().catch(() => null);
    await signal();
    if (before === null) return;
    const deadline = Date.now() + 2_000;
    while (Date.now() < deadline) {
      await sleep(10);
      const now = await loadTime().catch(() => null);
      if (now === null || now !== before) return;
    }
  }

  /** What the server wrote to the pg_ctl log after `offset` (its last 64 KiB at most; '' when unreadable). */
  private logSince(offset: number): Promise<string> {
    return readFileTail(this.o.logFile, 65_536, offset);
  }

  /** Creates the replication role on a primary when it is missing (first start after initdb). */
  private ensureReplicationRole(): Promise<void> {
    return this.ensureRole('replication', this.o.replication, (role, pw) => [`CREATE ROLE ${role} WITH LOGIN REPLICATION${pw}`]);
  }

  /**
   * Creates `db.authentication.rewind` on a primary (at its start, after a promotion) when it is missing, with what pg_rewind
   * reads on its source (PostgreSQL's documented grants for a rewind without superuser).
   */
  private ensureRewindRole(): Promise<void> {
    return this.ensureRole('rewind', this.o.rewind, (role, pw) => [
      `CREATE ROLE ${role} WITH LOGIN${pw}`,
      ...REWIND_FUNCTIONS.map((fn) => `GRANT EXECUTE ON FUNCTION pg_catalog.${fn} TO ${role}`),
    ]);
  }

  /**
   * Creates a role the agent logs in as when it is missing, by `statements` (given the quoted
   * role and its ` PASSWORD ...` clause) in one transaction; a role that exists is left as the
   * operator made it, and the superuser is never touched. A failure is logged, never thrown.
   */
  private async ensureRole(what: string, creds: PgCredentials, statements: (role: string, password: string) => readonly string[]): Promise<void> {
    const { username, password } = creds;
    if (username === this.o.superuser.username) return;
    try {
      const rows = await this.session.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [username]);
      if (rows.length) return;
      await withClient(await this.target(), MAINTENANCE_LIMITS, async (c) => {
        const sql = statements(c.escapeIdentifier(username), password ? ` PASSWORD ${c.escapeLiteral(password)}` : '');
        await c.query('BEGIN');
        for (const q of sql) await c.query(q);
        await c.query('COMMIT');
      });
      this.log.info(`created the ${what} role`, { role: username });
    } catch (e) {
      this.log.error(`could not create the ${what} role`, { role: username, error: describe(e) });
    }
  }

  stop(mode: StopMode, timeoutMs?: number, opts: StopOptions = {}): Promise<void> {
    if (!opts.untilShutdownCheckpoint || mode === 'immediate') return this.exclusive(() => this.stopNow(mode, timeoutMs, 'stop_failed', { beforeStop: { until: opts.beforeStopUntil } }));
    let checkpointed: () => void = () => {};
    const written = new Promise<void>((resolve) => (checkpointed = resolve));
    // The operation goes on until the postmaster has exited: the next one (a start) waits for that.
    const exited = this.exclusive(() => this.stopNow(mode, timeoutMs, 'stop_failed', { onShutdownCheckpoint: checkpointed, beforeStop: { until: opts.beforeStopUntil } }));
    return Promise.race([written, exited]);
  }

  /** Runs the operator's before_stop script, waiting for it at most until `until` (epoch ms). */
  private async runBeforeStop(until: number | undefined): Promise<void> {
    if (until === undefined) return this.o.beforeStop();
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), Math.max(0, until - Date.now()))));
    try {
      if ((await Promise.race([this.o.beforeStop().then(() => 'done' as const), late])) === 'late') {
        this.log.warn('before_stop is still running and the leader lock runs out soon: stopping the server without waiting for it');
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Stops the server. `beforeStop` runs the operator's before_stop script first (fast and smart
   * stops only), waiting for it until `until` at most: the stops the agent asks for (stop,
   * restart), not those inside another operation (a follow, a slot copy, a bootstrap).
   */
  private async stopNow(
    mode: StopMode,
    timeoutMs: number | undefined,
    failCode: DatabaseErrorCode,
    opts: { readonly onShutdownCheckpoint?: () => void; readonly beforeStop?: { readonly until: number | undefined } } = {},
  ): Promise<void> {
    const onShutdownCheckpoint = opts.onShutdownCheckpoint;
    const pid = await this.ctl.livePid();
    this.session.close();
    if (pid === null) {
      this.states.set('stopped');
      return;
    }
    this.states.set('stopping');
    const watching = { on: onShutdownCheckpoint !== undefined };
    try {
      // An immediate stop is an emergency (a primary that lost its lock, a silent server): no operator script delays it.
      if (mode !== 'immediate' && opts.beforeStop) await this.runBeforeStop(opts.beforeStop.until);
      await this.ctl.signalStop(mode);
      if (onShutdownCheckpoint) void this.watchShutdownCheckpoint(watching, onShutdownCheckpoint);
      let outcome = await this.ctl.waitForExit(pid, mode === 'immediate' ? IMMEDIATE_SHUTDOWN_GRACE_MS : (timeoutMs ?? this.o.stopHardLimitMs));
      watching.on = false;
      let immediate = mode === 'immediate';
      if (outcome === 'timeout' && timeoutMs !== undefined && !immediate) {
        this.log.warn('server did not stop in time: escalating to immediate', { mode, timeoutMs });
        await this.ctl.signalStop('immediate');
        outcome = await this.ctl.waitForExit(pid, IMMEDIATE_SHUTDOWN_GRACE_MS);
        immediate = true;
      }
      if (outcome === 'timeout' && immediate) {
        // A frozen server (SIGSTOP, a hung mount) keeps SIGQUIT pending and would answer again once thawed.
        this.log.warn('server did not react to the immediate shutdown: killing its processes', { pid, grace_ms: IMMEDIATE_SHUTDOWN_GRACE_MS });
        await killDataDirProcesses(this.o.dataDir);
        outcome = await this.ctl.waitForExit(pid, KILLED_EXIT_WAIT_MS);
        // Counted as down: such processes can run nothing more (see killPending), though they hold the data directory until they are gone.
        const stuck = outcome === 'exited' ? await serverProcessesInDataDir(this.o.dataDir) : [];
        if (stuck.length) this.log.warn('processes of the server are stuck in the kernel (a hung disk or mount?) with SIGKILL pending: they can run nothing more and die once it lets them go', { pids: stuck });
      }
      if (outcome === 'timeout') throw new Error(`postmaster ${pid} still running`);
      this.states.set('stopped');
    } catch (e) {
      this.states.set('stop_failed');
      throw this.fail(failCode, `${mode} stop failed`, e);
    } finally {
      watching.on = false;
    }
  }

  /**
   * Calls `reached` once pg_control says "shut down": the shutdown checkpoint is durable, every
   * backend is gone, and the server can write nothing more; what is left (the WAL senders
   * handing the last WAL over, the processes exiting) takes tens of milliseconds more, which
   * a switchover need not wait for. Checked every 5 ms while `watching.on`.
   */
  private async watchShutdownCheckpoint(watching: { on: boolean }, reached: () => void): Promise<void> {
    while (watching.on) {
      const cf = await readControlFile(this.o.dataDir);
      if (cf?.state === DB_SHUTDOWNED) {
        this.log.debug('shutdown checkpoint written', { lsn: formatLsn(cf.checkpointLsn) });
        reached();
        return;
      }
      await sleep(5);
    }
  }

  restart(timeoutMs: number): Promise<void> {
    return this.exclusive(async () => {
      this.states.set('restarting');
      try {
        const heldBefore = await fenceHoldPresent(this.o.dataDir);
        const recovery = await this.currentRecovery();
        await this.stopNow('fast', timeoutMs, 'restart_failed', { beforeStop: { until: undefined } });
        // The agent froze or was cut off during the stop and the fencer stopped the server:
        // what this restart was to start is decided again (lifting the hold here could start a
        // second primary on the old timeline).
        if (!heldBefore && (await fenceHoldPresent(this.o.dataDir))) {
          throw this.fail('restart_failed', 'the fencer stopped this server during the restart (the agent was frozen or cut off): not starting it as the restart planned');
        }
        await this.writeRole(recovery);
      } catch (e) {
        this.states.set('restart_failed');
        throw e instanceof DatabaseError ? e : this.fail('restart_failed', 'restart failed', e);
      }
      await this.launch(timeoutMs, 'restarting', 'restart_failed');
    });
  }

  private async currentRecovery(): Promise<RecoveryTarget | null> {
    if (this.recovery === undefined) this.recovery = await this.files.readRecoveryTarget();
    return this.recovery;
  }

  async reload(): Promise<void> {
    try {
      if ((await this.ctl.livePid()) === null) throw new Error('the server is not running');
      await this.reloadAndWait();
    } catch (e) {
      throw this.fail('reload_failed', 'reload failed', e);
    }
  }

  promote(timeoutMs: number, opts: PromoteOptions = {}): Promise<void> {
    return this.exclusive(async () => {
      const started = Date.now();
      const deadline = started + timeoutMs;
      try {
        const catchUp = opts.walAtLeast === undefined ? null : await this.promoteOnceCaughtUp(opts.walAtLeast, Math.min(opts.catchUpMs ?? 0, timeoutMs));
        // No pre-checks: pg_promote() on the kept session fails when the server is down, and
        // answers for one that left recovery already (see requestPromote).
        const via = catchUp?.signalled ? 'pg_promote' : await this.requestPromote();
        const askedAt = Date.now();
        // Every millisecond here is a millisecond of refused writes: poll tightly (one cheap query).
        let nudgeAt = askedAt + PROMOTE_NUDGE_MS;
        let nudges = 0;
        while (await this.inRecoveryWhilePromoting()) {
          if (Date.now() >= deadline) throw new Error(`still in recovery after ${timeoutMs} ms`);
          if (Date.now() >= nudgeAt) {
            nudges++;
            nudgeAt = Date.now() + PROMOTE_NUDGE_MS;
            await this.session.query('SELECT pg_reload_conf()').catch(() => undefined);
          }
          await sleep(PROMOTE_POLL_MS);
        }
        if (nudges > 0) this.log.info('the promotion waited for a wake-up of the startup process', { nudges, after_ms: Date.now() - askedAt });
        const writableMs = Date.now() - started;
        opts.onWritable?.();
        // the server removed standby.signal itself; keep the files in step so a restart stays primary
        await this.writeRole(null);
        await this.reloadAndWait(() => this.reloadViaSession());
        this.log.info('promoted', { via, ...(catchUp ? { catch_up_ms: catchUp.ms } : {}), asked_after_ms: askedAt - started, writable_ms: writableMs, total_ms: Date.now() - started });
        // A rewind role added to a running cluster's files exists once a primary has started or promoted.
        await this.ensureRewindRole();
      } catch (e) {
        throw this.fail('promote_failed', 'promote failed', e);
      }
    });
  }

  /**
   * Whether a server asked to promote is still in recovery. A query that fails counts as "still"
   * while the postmaster lives (it may be busy ending recovery); a server that exited (say
   * "recovery aborted because of insufficient parameter settings") fails the promotion at once,
   * with its last log lines, instead of holding the leader key until the timeout.
   */
  private async inRecoveryWhilePromoting(): Promise<boolean> {
    try {
      return await this.inRecovery();
    } catch (e) {
      if ((await this.ctl.livePid()) !== null) return true;
      // The reason is a FATAL line a few lines before the shutdown's own lines.
      const tail = serverLogExcerpt(await this.logSince(0), 30);
      const fatal = tail.filter((l) => /\b(FATAL|PANIC):/.test(l));
      const log = (fatal.length ? fatal.slice(-3) : tail.slice(-5)).join('\n');
      throw new Error(`the server exited during the promotion (${describe(e)})${log ? `; server log:\n${log}` : ''}`);
    }
  }

  /**
   * Waits until the server holds WAL up to `lsn` (received from the upstream, or replayed), at
   * most `ms`, and asks it to promote in the same query the moment it does: in a switchover
   * `lsn` is the old leader's shutdown checkpoint, so no commit it acknowledged is left behind
   * (a promotion replays everything received before it ends, so received is enough). Past `ms`
   * the shortfall is logged and the caller promotes anyway; on an error (the server is down, or
   * no longer in recovery) the caller's own request finds out.
   */
  private async promoteOnceCaughtUp(lsn: number, ms: number): Promise<{ ms: number; signalled: boolean }> {
    const started = Date.now();
    const wanted = formatLsn(lsn);
    try {
      for (;;) {
        const [row] = await this.session.query<{ have: string | null; signalled: boolean | null }>(
          `SELECT have::text AS have, CASE WHEN have >= $1::pg_lsn THEN pg_promote(wait => false) END AS signalled
             FROM (SELECT greatest(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()) AS have) w`,
          [wanted],
        );
        if (row?.signalled !== null && row?.signalled !== undefined) return { ms: Date.now() - started, signalled: row.signalled };
        if (Date.now() - started >= ms) {
          this.log.warn('promoting without all of the WAL the old leader wrote', { wanted, have: row?.have ?? null, waited_ms: Date.now() - started });
          return { ms: Date.now() - started, signalled: false };
        }
        await sleep(CATCH_UP_POLL_MS);
      }
    } catch (e) {
      this.log.debug('waiting for the WAL before promoting failed', { error: describe(e) });
      return { ms: Date.now() - started, signalled: false };
    }
  }

  /**
   * Asks the server to promote with `pg_promote(wait => false)` on the session the agent
   * already holds: `pg_ctl promote` costs two process start-ups (`runuser` opens a PAM
   * session) before the server hears of it. pg_ctl remains the fallback when the query fails.
   */
  private async requestPromote(): Promise<'pg_promote' | 'pg_ctl'> {
    try {
      const [row] = await this.session.query<{ signalled: boolean }>('SELECT pg_promote(wait => false) AS signalled');
      if (row?.signalled === true) return 'pg_promote';
      this.log.warn('pg_promote() could not signal the postmaster; trying pg_ctl promote');
    } catch (e) {
      // "recovery is not in progress": it finished promoting meanwhile
      if ((await this.inRecovery().catch(() => true)) === false) return 'pg_promote';
      this.log.warn('pg_promote() failed; trying pg_ctl promote', { error: describe(e) });
    }
    await this.ctl.requestPromote();
    return 'pg_ctl';
  }

  /** SIGHUP through `pg_reload_conf()` on the session, or pg_ctl reload when the query fails. */
  private async reloadViaSession(): Promise<void> {
    try {
      const [row] = await this.session.query<{ signalled: boolean }>('SELECT pg_reload_conf() AS signalled');
      if (row?.signalled === true) return;
    } catch (e) {
      this.log.debug('pg_reload_conf() failed; using pg_ctl reload', { error: describe(e) });
    }
    await this.ctl.reload();
  }

  private async inRecovery(): Promise<boolean> {
    const [row] = await this.session.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r');
    if (!row) throw new Error('no answer');
    return row.r;
  }

  follow(upstream: Upstream | null, opts: { readonly slotName?: string; readonly timeoutMs: number }): Promise<void> {
    return this.exclusive(async () => {
      let running: boolean;
      let primary = false;
      try {
        const recovery: RecoveryTarget = {
          upstream: upstream ? endpointFromUrl(upstream.connUrl) : null,
          ...(opts.slotName ? { slotName: opts.slotName } : {}),
        };
        running = (await this.ctl.livePid()) !== null;
        if (running) primary = !(await this.inRecovery());
        const changed = await this.writeRole(recovery);
        if (running && !primary) {
          // PostgreSQL 15 reloads primary_conninfo and primary_slot_name: no restart for a replica
          if (changed) await this.reloadAndWait();
          return;
        }
      } catch (e) {
        throw this.fail('follow_failed', 'follow failed', e);
      }
      try {
        if (running && primary) await this.stopNow('fast', opts.timeoutMs, 'follow_failed');
        await this.launch(opts.timeoutMs, 'starting', 'start_failed');
      } catch (e) {
        throw e instanceof DatabaseError && e.code === 'follow_failed' ? e : this.fail('follow_failed', 'follow failed', e);
      }
    });
  }

  rewind(source: Upstream): Promise<void> {
    return this.exclusive(async () => {
      const marker = join(this.o.dataDir, REWIND_FAILED_MARKER);
      try {
        if ((await this.ctl.livePid()) !== null) throw new Error('the server must be stopped');
      } catch (e) {
        throw this.fail('rewind_failed', `pg_rewind from ${source.name} refused`, e);
      }
      if (await pathExists(marker)) {
        // A second run would read WAL the first may have replaced, and miss blocks this node changed: only a rebuild is sure.
        throw this.fail('rewind_interrupted', `pg_rewind from ${source.name} refused: ${REWIND_INTERRUPTED}; it must be reinitialized`);
      }
      try {
        // Written before pg_rewind runs: an agent killed meanwhile, or a disk too full to write it afterwards, must not leave a half-rewound directory unmarked.
        await writeOwnedFile(marker, `${new Date().toISOString()} pg_rewind from ${source.name} started\n`, this.o.runAsUser);
      } catch (e) {
        throw this.fail('rewind_failed', `pg_rewind from ${source.name} not started: the data directory cannot be written`, e);
      }
      try {
        const before = await shutdownStateOf(this.o.binDir, this.o.dataDir, this.o.runAsUser);
        if (before && !before.clean) {
          this.log.info('target was not shut down cleanly: pg_rewind runs crash recovery first', { state: before.state });
        }
        await this.clearCrashLeftovers(10_000);
        const recovery = await this.currentRecovery();
        const { outcome, divergedAt } = await pgRewind(this.o, endpointFromUrl(source.connUrl));
        // pg_rewind copied the source's configuration files: put ours back
        await this.writeRole(recovery);
        await rm(marker, { force: true });
        this.controlCache = null;
        if (outcome === 'rewound') {
          // What this node wrote past the branch point is gone: commits acknowledged there only (asynchronous mode) with it.
          const at = divergedAt ? ` after ${divergedAt.lsn} on timeline ${divergedAt.timeline}` : '';
          this.log.warn(`pg_rewind rewound this data directory to ${source.name}'s history: the WAL it had${at} was discarded, and any transaction committed there only on this node is gone`, {
            source: source.name,
            ...(divergedAt ? { diverged_at: divergedAt.lsn, diverged_timeline: divergedAt.timeline } : {}),
          });
        } else this.log.info('pg_rewind finished: nothing to rewind', { source: source.name });
      } catch (e) {
        if (targetMayBeHalfRewound(e)) {
          // pg_rewind removes files its source lacks, the marker among them, last: put it back where it can.
          await writeOwnedFile(marker, `${new Date().toISOString()} ${describe(e)}\n`, this.o.runAsUser).catch(() => undefined);
          throw this.fail('rewind_interrupted', `pg_rewind from ${source.name} failed after it began rewriting the data directory`, e);
        }
        await rm(marker, { force: true });
        // pg_rewind that could not connect stopped before touching the target.
        throw this.fail(connectFailed(e) ? 'rewind_source_unreachable' : 'rewind_failed', `pg_rewind from ${source.name} failed`, e);
      }
    });
  }

  createReplica(source: Upstream | null, opts: CreateReplicaOptions = {}): Promise<void> {
    return this.exclusive(async () => {
      this.states.set('creating_replica');
      const from = source?.name ?? 'a backup';
      try {
        if ((await this.ctl.livePid()) !== null) throw new Error('the server is running');
        const endpoint = source ? endpointFromUrl(source.connUrl) : null;
        const started = Date.now();
        if (opts.replacing) this.recovery = undefined;
        const attempts = await createReplicaWithMethods(this.o, endpoint, opts.methods?.length ? opts.methods : this.o.createReplicaMethods, { replacing: opts.replacing === true });
        for (const a of attempts.filter((x) => !x.ok)) this.log.warn('replica creation method failed; trying the next', { method: a.method, error: a.error });
        // a copy started without standby.signal would become a second primary
        await this.writeRole({ upstream: endpoint });
        this.controlCache = null;
        this.states.set('stopped');
        this.log.info('replica created', { source: from, method: attempts[attempts.length - 1]?.method, ms: Date.now() - started });
      } catch (e) {
        this.states.set('stopped');
        const code = e instanceof DataDirectoryRefused ? 'data_dir_not_empty' : e instanceof ReplicaMethodsFailed && e.sourceUnreachable ? 'create_replica_source_unreachable' : 'create_replica_failed';
        throw this.fail(code, `replica creation from ${from} failed`, e);
      }
    });
  }

  removeDataDirectory(): Promise<void> {
    return this.exclusive(async () => {
      try {
        if ((await this.ctl.livePid()) !== null) throw new Error('the server is running');
        await emptyDirectory(this.o.dataDir);
        this.recovery = undefined;
        this.controlCache = null;
        this.states.set('stopped');
      } catch (e) {
        throw this.fail('remove_data_failed', 'could not remove the data directory', e);
      }
    });
  }

  // ---------------------------------------------------------------- SQL-level changes

  async checkpoint(): Promise<void> {
    try {
      await withClient(await this.target(), MAINTENANCE_LIMITS, (c) => c.query('CHECKPOINT'));
    } catch (e) {
      throw this.fail('checkpoint_failed', 'CHECKPOINT failed', e);
    }
  }

  async configure(parameters: Readonly<Record<string, ParameterValue>>, local?: LocalServerConfig): Promise<void> {
    this.dynamic = { ...parameters };
    if (local !== undefined) this.local = local;
    await this.applyConfiguration();
  }

  async setSynchronousStandbyNames(value: string): Promise<void> {
    this.syncNames = value;
    await this.applyConfiguration();
  }

  /** Rewrites the files (when a cluster exists) and reloads a running server so pg_settings shows pending restarts. */
  private async applyConfiguration(): Promise<void> {
    try {
      if (!(await pathExists(join(this.o.dataDir, 'global', 'pg_control')))) return;
      const recovery = await this.currentRecovery();
      await this.readStandbyMinimums(recovery);
      const changed = await this.files.write(this.configInput(recovery));
      if (changed && (await this.ctl.livePid()) !== null) await this.reloadAndWait();
    } catch (e) {
      throw this.fail('configure_failed', 'could not apply the configuration', e);
    }
  }

  async syncSlots(plan: SlotPlan): Promise<void> {
    try {
      if ((await this.ctl.livePid()) === null) throw new Error('the server is not running');
      const problems = await applySlotPlan(this.session, await this.target(), MAINTENANCE_LIMITS, plan);
      if (problems.length) throw new Error(problems.join('; '));
    } catch (e) {
      throw this.fail('slots_failed', 'replication slots not in sync', e);
    }
  }

  copyLogicalSlots(source: Upstream, names: readonly string[], timeoutMs: number): Promise<void> {
    return this.exclusive(async () => {
      let recovery: RecoveryTarget | null;
      try {
        if (!(await this.inRecovery())) throw new Error('the server is not a running replica');
        const endpoint = endpointFromUrl(source.connUrl);
        const { host, port, ...credentials } = await this.target();
        const offered = await readLogicalSlots({ ...credentials, host: endpoint.host, port: endpoint.port }, MAINTENANCE_LIMITS, names);
        // Decoding reads local WAL from the slot's restart_lsn: a copy older than what this replica holds could never move.
        const oldest = (await oldestLocalWal(this.session)) ?? 0;
        const slots = offered.filter((s) => s.restartLsn >= oldest);
        const later = offered.filter((s) => s.restartLsn < oldest).map((s) => `${s.name} (needs WAL from ${formatLsn(s.restartLsn)})`);
        if (!slots.length) {
          throw new Error(`this replica holds WAL from ${formatLsn(oldest)} only; ${later.join(', ')}: copied once the consumer has confirmed past that`);
        }
        if (later.length) this.log.info('logical slots not copied yet: this replica lacks the WAL they need', { slots: later, oldest_wal: formatLsn(oldest) });
        recovery = await this.currentRecovery();
        await this.stopNow('fast', timeoutMs, 'slots_failed');
        await writeLogicalSlots(this.o.dataDir, this.o.runAsUser, slots);
        await this.writeRole(recovery);
        this.log.info('copied logical slots from the primary', { source: source.name, slots: slots.map((s) => s.name) });
      } catch (e) {
        // A server stopped for the copy comes back as it was, copy or not.
        if ((await this.ctl.livePid()) === null && (await pathExists(join(this.o.dataDir, 'global', 'pg_control')))) {
          await this.launch(timeoutMs, 'starting', 'start_failed').catch(() => undefined);
        }
        throw e instanceof DatabaseError ? e : this.fail('slots_failed', `copying the logical slots ${names.join(', ')} from ${source.name} failed`, e);
      }
      await this.launch(timeoutMs, 'starting', 'start_failed');
    });
  }

  async terminateClientSessions(): Promise<void> {
    try {
      // MATERIALIZED: the planner must not evaluate pg_terminate_backend before excluding our own pid
      const rows = await this.session.query<{ pid: number }>(
        `WITH targets AS MATERIALIZED (
           SELECT pid FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid())
         SELECT pid FROM targets WHERE pg_terminate_backend(pid)`,
      );
      const pids = rows.map((r) => r.pid);
      // "at once": return only when the sessions are gone (bounded), not merely signalled
      const deadline = Date.now() + 2_000;
      while (pids.length && Date.now() < deadline) {
        const [left] = await this.session.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ANY($1)', [pids]);
        if (!left?.n) break;
        await sleep(10);
      }
      this.log.info('terminated client sessions', { count: pids.length });
    } catch (e) {
      this.log.warn('could not terminate client sessions', { error: describe(e) });
    }
  }

  /** Closes the probe connection (the server keeps running). */
  close(): void {
    this.session.close();
  }
}
