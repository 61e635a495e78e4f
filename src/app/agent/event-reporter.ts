import type { RawConfig } from '../../domain/cluster/config/config.js';
import type { Cluster } from '../../domain/cluster/model/cluster.js';
import type { NodeSnapshot } from '../../domain/cluster/model/snapshot.js';
import { explanationText, type CandidateExplanation } from '../../domain/cluster/rules/eligibility-explanation.js';
import type { AgentMetricsSink, MeasuredOperation } from '../../ports/agent-metrics.js';
import type { CallbackRunner } from '../../ports/callbacks.js';
import type { Clock } from '../../ports/clock.js';
import type { ClusterEventType, EventLog } from '../../ports/events.js';

/** Roles a running server settles in; a change between them is a role change. */
const SETTLED_ROLES = new Set(['primary', 'replica', 'standby_leader']);

/** Jobs reported as started/finished, with the event prefix and the measured operation. */
const REPORTED_JOBS: Readonly<Record<string, { readonly prefix: 'demote' | 'reinitialize' | 'restart'; readonly measured?: MeasuredOperation }>> = {
  demote: { prefix: 'demote', measured: 'demote' },
  // A primary cluster becoming a standby cluster: its primary becomes the standby leader.
  'demote cluster': { prefix: 'demote', measured: 'demote' },
  reinitialize: { prefix: 'reinitialize' },
  restart: { prefix: 'restart' },
};

/** Actions reported as started/finished (inside any job), with the event prefix and the measured operation. */
const REPORTED_ACTIONS: Readonly<Record<string, { readonly prefix: 'promote' | 'rewind' | 'basebackup'; readonly measured: MeasuredOperation }>> = {
  promote: { prefix: 'promote', measured: 'promote' },
  rewind: { prefix: 'rewind', measured: 'rewind' },
  createReplica: { prefix: 'basebackup', measured: 'basebackup' },
};

/** Jobs during which the server is down on purpose: no on_stop (their end says what happened). */
const QUIET_STOP_JOBS = new Set(['demote', 'demote cluster', 'promote', 'restart', 'reinitialize', 'rewind', 'follow']);

/**
 * The job that creates a cluster (initdb, a custom bootstrap, a standby cluster's copy) or
 * undoes one left unfinished. Patroni calls no callback while it bootstraps: the server may
 * still be rolled back, and until the cluster is registered a VIP script would send clients
 * to a cluster that may not stay.
 */
const BOOTSTRAP_JOB = 'bootstrap';

/** A request (failover key) this agent saw: when, and what kind. */
interface SeenRequest {
  readonly revision: string;
  readonly at: number;
  readonly kind: 'switchover' | 'failover';
  readonly leader: string | null;
  readonly candidate: string | null;
}

/** What the cluster looked like at the last view, to tell what changed. */
interface ClusterBaseline {
  readonly members: ReadonlySet<string>;
  readonly config: RawConfig | null;
  readonly pause: boolean;
}

/** A request is measured only this long after it was seen. */
const REQUEST_MEMORY_MS = 15 * 60_000;

/** The paths of `a` and `b` that differ (`ttl`, `db.parameters.work_mem`), deepest first level of objects. */
export function changedKeys(a: unknown, b: unknown, prefix = ''): string[] {
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if ((isObj(a) || a === undefined) && (isObj(b) || b === undefined) && (isObj(a) || isObj(b))) {
    a = a ?? {};
    b = b ?? {};
  }
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => changedKeys(a[k], b[k], prefix ? `${prefix}.${k}` : k));
  }
  return JSON.stringify(a) === JSON.stringify(b) ? [] : [prefix || '(root)'];
}

/**
 * Turns what the HA loop sees and does into events (`GET /events`), callbacks
 * (`db.callbacks`) and duration metrics, without taking part in any decision: it hears the
 * lock being taken and lost, every published snapshot (role and running changes), the jobs
 * and their long actions, and every cluster view. Events about the whole cluster (members
 * joining or leaving, pause, configuration) are reported by the member holding the leader
 * key only, so a merged stream has each once.
 */
export class EventReporter {
  private held = false;
  private running: boolean | null = null;
  private settledRole: string | null = null;
  private reason = 'agent started';
  private leaderGoneAt: number | null = null;
  /** Who held the key that went at `leaderGoneAt`: a node that takes its own key again did not fail over. */
  private leaderGoneFrom: string | null = null;
  private holder: string | null | undefined = undefined;
  private request: SeenRequest | null = null;
  private baseline: ClusterBaseline | null = null;
  private job: { readonly name: string; readonly at: number } | null = null;
  private action: { readonly type: string; readonly at: number } | null = null;
  private noCandidate: string | null = null;
  /** The agent's shutdown began: what is published from then on holds facts from before the server was stopped. */
  private shutDown = false;

  constructor(
    private readonly deps: {
      readonly events: EventLog;
      readonly callbacks: CallbackRunner;
      readonly metrics: AgentMetricsSink | null;
      readonly clock: Clock;
      readonly me: () => string;
    },
  ) {}

  /** The decision of the tick in progress: the reason given to what follows from it. */
  decided(message: string): void {
    this.reason = message;
  }

  /** The lock's deadline changed (null: not held). */
  leaseChanged(deadline: number | null): void {
    const held = deadline !== null;
    if (held === this.held) return;
    this.held = held;
    this.emit(held ? 'leader_acquired' : 'leader_lost', held ? `took the leader key: ${this.reason}` : `gave up or lost the leader key: ${this.reason}`);
  }

  /** The watch reported the leader key's holder (null: deleted or expired). */
  leaderKeyHolder(holder: string | null, at = this.deps.clock.now()): void {
    if (holder === this.holder) return;
    if (holder === null && this.holder !== null) {
      this.leaderGoneAt = at;
      this.leaderGoneFrom = this.holder ?? null;
    } else if (holder !== null && holder !== this.deps.me()) this.leaderGoneAt = null;
    this.holder = holder;
  }

  /**
   * A snapshot was published: role and running changes become events and callbacks. A
   * bootstrap's snapshots are not seen at all, so the first one after it compares with the
   * server as it was before (stopped, or never seen): a bootstrap that completed is a start,
   * with the role it ended in; one rolled back is nothing.
   */
  snapshotPublished(snap: NodeSnapshot, jobName: string | null): void {
    if (this.shutDown || this.bootstrapping(snap, jobName)) return;
    const running = snap.facts.running;
    const role = snap.status.role;
    const settled = running && SETTLED_ROLES.has(role);
    if (this.running === null) {
      this.running = running;
      if (settled) {
        this.settledRole = role;
        // A server the agent takes over running (the agent restarted or upgraded): Patroni's
        // first cycle calls on_start too, so that a VIP script asserts the address again.
        this.deps.callbacks.run('on_start', role);
      }
      return;
    }
    if (settled) {
      if (this.settledRole !== null && role !== this.settledRole) {
        this.emit('role_changed', `${this.settledRole} -> ${role}: ${this.reason}`, { from: this.settledRole, to: role });
        this.deps.callbacks.run('on_role_change', role);
      } else if (!this.running && jobName !== 'restart') {
        this.deps.callbacks.run('on_start', role);
      }
      this.settledRole = role;
    } else if (this.running && !running && (jobName === null || !QUIET_STOP_JOBS.has(jobName))) {
      this.deps.callbacks.run('on_stop', this.settledRole ?? role);
    }
    this.running = running;
  }

  /** A cluster view was read; `isLeader`: this node holds the leader key. */
  clusterObserved(cluster: Cluster, isLeader: boolean): void {
    const now = this.deps.clock.now();
    this.leaderKeyHolder(cluster.leader?.name ?? null, now);
    const fk = cluster.failover;
    // A request carried out elsewhere is forgotten: a later automatic failover to this node is not its completion.
    if (fk === null && cluster.leader !== null && cluster.leader.name !== this.deps.me()) this.request = null;
    if (fk && (fk.leader || fk.member)) {
      const due = fk.scheduledAt === null || Date.parse(fk.scheduledAt) <= now;
      if (due && this.request?.revision !== fk.revision) {
        this.request = { revision: fk.revision, at: now, kind: fk.leader ? 'switchover' : 'failover', leader: fk.leader, candidate: fk.member };
      }
    }
    const next: ClusterBaseline = {
      members: new Set(cluster.members.map((m) => m.name)),
      config: cluster.config?.value ?? null,
      pause: cluster.config?.value?.['pause'] === true,
    };
    const before = this.baseline;
    this.baseline = next;
    if (before === null || !isLeader) return;
    for (const name of next.members) if (!before.members.has(name)) this.emit('member_joined', `${name} joined the cluster`, { joined: name });
    for (const name of before.members) if (!next.members.has(name)) this.emit('member_left', `${name} left the cluster (its member key is gone)`, { left: name });
    if (before.pause !== next.pause) this.emit(next.pause ? 'paused' : 'resumed', next.pause ? 'maintenance mode on: automatic failover is off' : 'maintenance mode off: automatic failover is on again');
    if (before.config !== null && next.config !== null && before.config !== next.config) {
      const keys = changedKeys(before.config, next.config).filter((k) => k !== 'pause');
      if (keys.length) this.emit('config_changed', `dynamic configuration changed: ${keys.join(', ')}`, { keys });
    }
  }

  /** A background job starts (its first action is about to run). */
  jobStarted(name: string): void {
    this.job = { name, at: this.deps.clock.now() };
    const r = REPORTED_JOBS[name];
    if (r) this.emit(`${r.prefix}_started`, this.reason);
  }

  /** An action of the running job starts: the one before it ended well. */
  actionStarted(type: string): void {
    this.endAction(true, null);
    this.action = { type, at: this.deps.clock.now() };
    const r = REPORTED_ACTIONS[type];
    if (r) this.emit(`${r.prefix}_started`, this.reason);
  }

  /** The job ended: completed, or stopped by `error`. */
  jobEnded(name: string, completed: boolean, error: string | null): void {
    this.endAction(completed, error);
    const started = this.job?.name === name ? this.job.at : null;
    this.job = null;
    const r = REPORTED_JOBS[name];
    if (!r) return;
    const ms = started === null ? null : this.deps.clock.now() - started;
    const data = { ok: completed, ...(ms !== null ? { duration_ms: ms } : {}), ...(error ? { error } : {}) };
    this.emit(`${r.prefix}_finished`, completed ? `${name} finished` : `${name} failed: ${error ?? 'unknown error'}`, data);
    if (completed && ms !== null && r.measured) this.deps.metrics?.operationDuration(r.measured, ms / 1000);
    if (completed && name === 'restart') this.deps.callbacks.run('on_restart', this.settledRole ?? 'replica');
  }

  /** The server's configuration was reloaded with changed parameters. */
  reloaded(): void {
    if (this.running && !this.shutDown && this.job?.name !== BOOTSTRAP_JOB) this.deps.callbacks.run('on_reload', this.settledRole ?? 'replica');
  }

  /**
   * The agent shuts down, the loop and its jobs over; `stoppedServer`: it stopped the server
   * itself (false when it leaves it running, in maintenance mode, or could not stop it). A
   * server announced as running gets its on_stop, with the role it had, as Patroni's stop()
   * calls it; nothing is called after this. Returns whether on_stop was called.
   */
  agentStopping(stoppedServer: boolean): boolean {
    if (this.shutDown) return false;
    this.shutDown = true;
    if (!stoppedServer || this.running !== true) return false;
    this.running = false;
    this.deps.callbacks.run('on_stop', this.settledRole ?? 'replica');
    return true;
  }

  /**
   * The cluster has no leader and this tick judged every member: when none can be promoted,
   * say why once (again when the reasons change). `report`: this member speaks for the cluster.
   */
  leaderless(explanations: readonly CandidateExplanation[] | null, report: boolean): void {
    if (explanations === null || explanations.some((e) => e.eligible)) {
      this.noCandidate = null;
      return;
    }
    // No member key at all: nobody was judged (etcd takes no writes, or no agent runs long enough to publish one).
    const text = explanations.length ? explanationText(explanations) : 'no member has its member key in etcd (the agents cannot write them: see their logs)';
    if (text === this.noCandidate) return;
    this.noCandidate = text;
    if (report) this.emit('no_candidate', `the cluster has no leader and no member can be promoted: ${text}`, { members: explanations });
  }

  /** A fencing stop this node's fencer reported. */
  fenced(reason: string, durationMs: number | null, at: number): void {
    this.deps.events.emit('fencing', reason, { ...(durationMs !== null ? { duration_ms: durationMs } : {}), fenced_at: new Date(at).toISOString() });
    if (durationMs !== null) this.deps.metrics?.operationDuration('fencing', durationMs / 1000);
  }

  private endAction(ok: boolean, error: string | null): void {
    const a = this.action;
    if (a === null) return;
    this.action = null;
    const r = REPORTED_ACTIONS[a.type];
    if (!r) return;
    const now = this.deps.clock.now();
    const ms = now - a.at;
    this.emit(`${r.prefix}_finished`, ok ? `${r.prefix} finished` : `${r.prefix} failed: ${error ?? 'unknown error'}`, { ok, duration_ms: ms, ...(error ? { error } : {}) });
    if (!ok) return;
    this.deps.metrics?.operationDuration(r.measured, ms / 1000);
    if (a.type === 'promote') this.promoted(now);
  }

  /** This node became writable: a switchover or failover to it is complete. */
  private promoted(now: number): void {
    const req = this.request;
    const me = this.deps.me();
    if (req !== null && now - req.at < REQUEST_MEMORY_MS && (req.candidate === null || req.candidate === me)) {
      const ms = now - req.at;
      const from = req.leader ? ` from ${req.leader}` : '';
      this.emit(`${req.kind}_completed`, `${req.kind}${from} to ${me} completed: ${me} is writable`, { from: req.leader, to: me, duration_ms: ms });
      this.deps.metrics?.operationDuration(req.kind, ms / 1000);
    } else if (this.leaderGoneAt !== null && this.leaderGoneFrom !== me) {
      const ms = now - this.leaderGoneAt;
      const from = this.leaderGoneFrom;
      this.emit(
        'failover_completed',
        `automatic failover${from ? ` from ${from}` : ''} to ${me} completed: the leader key was gone ${ms} ms before ${me} was writable`,
        { ...(from ? { from } : {}), to: me, automatic: true, duration_ms: ms },
      );
      this.deps.metrics?.operationDuration('failover', ms / 1000);
    }
    this.request = null;
    this.leaderGoneAt = null;
    this.leaderGoneFrom = null;
  }

  /** Data being created or undone by a bootstrap: also found outside the job when an agent stopped in the middle of one. */
  private bootstrapping(snap: NodeSnapshot, jobName: string | null): boolean {
    return jobName === BOOTSTRAP_JOB || this.job?.name === BOOTSTRAP_JOB || snap.facts.bootstrapUnfinished === true;
  }

  private emit(type: ClusterEventType, reason: string, data?: Readonly<Record<string, unknown>>): void {
    this.deps.events.emit(type, reason, data);
  }
}
