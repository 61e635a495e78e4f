import type { ParameterValue } from '../config/config.js';
import { decision, type Action, type AgentCommandErrorCode, type Decision, type LoopMemory } from './decision.js';
import { restartConditionProblem, type Leads } from '../rules/restart-conditions.js';
import { restartScheduleFrom, scheduleVerdict } from '../rules/schedule.js';
import { isSilent } from './silent-server.js';
import { majorVersion } from '../model/server-version.js';
import { copySource, leaderUpstream, replicaSource, startTimeoutMs, type TickContext } from './tick-context.js';

/** JSON with sorted keys, so equal settings compare equal. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * Server parameters to apply: the local recovery settings (db.recovery_conf), then the dynamic
 * parameters, then the local ones; in a standby cluster its restore_command and
 * archive_cleanup_command for every member and recovery_min_apply_delay for the standby
 * leader (its replicas would add the delay a second time) win over them all. Recovery
 * settings are written on every member: PostgreSQL reads them only in recovery, so a
 * promotion needs no rewrite. synchronous_standby_names is the loop's own in sync mode;
 * hot_standby_feedback is on while permanent logical slots exist (unless the local file
 * says otherwise).
 */
export function desiredParameters(ctx: TickContext): Record<string, ParameterValue> {
  const out: Record<string, ParameterValue> = { ...ctx.input.local.recoveryConf, ...ctx.config.db.parameters, ...ctx.input.local.parameters };
  if (ctx.config.synchronous_mode !== false) delete out['synchronous_standby_names'];
  const sc = ctx.standby;
  if (sc !== null) {
    if (sc.restore_command !== undefined) out['restore_command'] = sc.restore_command;
    if (sc.archive_cleanup_command !== undefined) out['archive_cleanup_command'] = sc.archive_cleanup_command;
    if (sc.recovery_min_apply_delay !== undefined && ctx.leaderIsMe) out['recovery_min_apply_delay'] = sc.recovery_min_apply_delay;
  }
  // A replica's copy of a logical slot is usable after a failover only while the leader keeps the catalog rows it needs.
  const logical = Object.values(ctx.config.slots).some((s) => s.type === 'logical');
  if (logical && ctx.input.local.parameters['hot_standby_feedback'] === undefined) out['hot_standby_feedback'] = true;
  return out;
}

/** configure() when the wanted parameters differ from the last ones applied. */
export function configureActions(ctx: TickContext): Action[] {
  if (!ctx.facts.initialized) return [];
  const action = configureAction(ctx);
  return action.key === ctx.input.memory.appliedParameters && ctx.facts.standbyMinimumsChanged !== true ? [] : [action];
}

/**
 * configure() ahead of a start (or of a new data directory): the server must start with the
 * cluster's parameters, not with what the files held before this agent ran. A standby
 * whose max_connections and the like are below the primary's refuses to start at all.
 * `always`: also when they look applied (a fresh data directory has default files).
 */
export function configureBeforeStart(ctx: TickContext, always = false): Action[] {
  const action = configureAction(ctx);
  return !always && action.key === ctx.input.memory.appliedParameters ? [] : [action];
}

/**
 * The configure action for this tick's wanted parameters and, with the local file's access
 * rules, those rules: a reload that changes only `db.pg_hba` or `db.pg_ident` configures too.
 */
function configureAction(ctx: TickContext): Extract<Action, { type: 'configure' }> {
  const parameters = desiredParameters(ctx);
  const { access } = ctx.input.local;
  if (access === undefined) return { type: 'configure', parameters, key: canonicalJson(parameters) };
  const local = { parameters: ctx.input.local.parameters, hba: access.hba, ident: access.ident };
  return { type: 'configure', parameters, key: canonicalJson({ parameters, hba: access.hba, ident: access.ident }), local };
}

/** Undoes a bootstrap that failed part way (primary or standby cluster): its new data directory was never in service. */
export const BOOTSTRAP_ROLLBACK: readonly Action[] = [
  { type: 'stop', mode: 'immediate' },
  { type: 'disarmWatchdog' },
  { type: 'releaseLeader' },
  { type: 'removeData' },
  { type: 'deleteInitialize', revision: null },
];

/** What the loop forgets about data directories it replaces (a base backup of the leader). */
export const FRESH_DATA: Partial<LoopMemory> = Object.freeze({
  rewindFailedOnTimeline: null,
  rewoundAt: null,
  lastRole: null,
  appliedParameters: null,
  timelineSeen: null,
  startFailures: 0,
  checkpointAfterPromote: null,
  positionConfirmed: null,
  primaryOnTimeline: null,
});

/** Answers a command with a failure. */
export function reject(id: number, error: AgentCommandErrorCode, message: string): Action {
  return { type: 'resolveCommand', id, ok: false, error, message };
}

/** Rejects the pending commands because a job runs; a forced reinitialize is queued instead. */
export function commandsWhileBusy(ctx: TickContext, busyWith: string): Action[] {
  const { restart, reinitialize } = ctx.input.commands;
  const out: Action[] = [];
  if (restart) out.push(reject(restart.id, 'action_in_progress', `${busyWith} already in progress`));
  if (reinitialize) {
    if (reinitialize.force) {
      out.push(
        { type: 'remember', patch: { reinitializeQueued: { fromLeader: reinitialize.fromLeader } } },
        { type: 'resolveCommand', id: reinitialize.id, ok: true, message: `reinitialize started (after the ${busyWith} in progress)` },
      );
    } else {
      out.push(reject(reinitialize.id, 'action_in_progress', `${busyWith} already in progress`));
    }
  }
  return out;
}


/**
 * Why this node's data must not be replaced by a copy of the leader's, or null: a server of
 * another major version than the leader's runs here, so a copy would not start with this
 * node's binaries (a pg_upgrade half done, db.bin_dir not yet changed), and the data wiped
 * for it may be the only way back.
 */
function versionMismatch(ctx: TickContext): string | null {
  const leader = ctx.cluster.members.find((m) => m.name === ctx.leaderName);
  const theirs = majorVersion(leader?.serverVersion);
  const mine = ctx.facts.running ? majorVersion(ctx.facts.serverVersion) : null;
  if (theirs === null || mine === null || theirs === mine) return null;
  return `this node runs PostgreSQL ${mine} and the leader ${theirs}: a copy of the leader would not start with this node's programs; point db.bin_dir at PostgreSQL ${theirs} and restart the agent, then reinitialize`;
}

/**
 * The actions of a reinitialization: stop, replace the data with a copy (from a member tagged
 * clonefrom unless `fromLeader`, see copySource; a keep_data method restores over the data in
 * place), start as the leader's replica; or why not (the refusal's code and text).
 */
function reinitializeActions(ctx: TickContext, fromLeader: boolean): Action[] | { readonly code: AgentCommandErrorCode; readonly message: string } {
  if (ctx.leaderIsMe) return { code: 'not_allowed_on_leader', message: 'I am the leader, can not reinitialize' };
  const upstream = leaderUpstream(ctx);
  if (!upstream) return { code: 'no_leader', message: 'the cluster has no leader to reinitialize from' };
  const mismatch = versionMismatch(ctx);
  if (mismatch) return { code: 'not_possible_now', message: mismatch };
  return [
    { type: 'stop', mode: 'immediate' },
    { type: 'remember', patch: { reinitializeQueued: null, ...FRESH_DATA } },
    ...configureBeforeStart(ctx, true),
    { type: 'createReplica', source: fromLeader ? upstream : copySource(ctx, upstream), replacing: true },
    { type: 'start', standby: true, ...replicaSource(ctx, upstream), timeoutMs: startTimeoutMs(ctx) },
  ];
}

/** `d` with `first` run before its actions (the rollback range moves along). */
function prepend(d: Decision, first: readonly Action[]): Decision {
  if (!first.length) return d;
  const rb = d.rollback;
  const rollback = rb ? { ...rb, fromIndex: rb.fromIndex + first.length, untilIndex: rb.untilIndex + first.length } : null;
  return { ...d, actions: [...first, ...d.actions], rollback };
}

/**
 * A restart the operator asked for (now or scheduled). The holder of the leader lock and a
 * running replica restart as they are; any other node (stopped, crashed, or a primary
 * without the lock) comes back as a replica of the leader (or of nobody): a restart must
 * never make a node without the lock writable (a crashed former primary, restarted in pause
 * while another node leads, would otherwise start as a second primary). A server that runs
 * but does not answer is stopped immediately (its processes killed where they do not react).
 */
function restartActions(ctx: TickContext, timeoutMs: number): Action[] {
  // A server that runs without answering (frozen, stuck on I/O) would sit on a fast shutdown for the whole timeout: stopped at once, killed if need be.
  const silent = isSilent(ctx);
  if ((ctx.leaderIsMe && ctx.lockValid) || ctx.isReplica) return [...(silent ? [{ type: 'stop' as const, mode: 'immediate' as const }] : []), { type: 'restart', timeoutMs }];
  const upstream = leaderUpstream(ctx);
  // The steady-state decision this joins already configures the server where its parameters changed.
  return [{ type: 'stop', mode: silent ? 'immediate' : 'fast' }, { type: 'start', standby: true, ...replicaSource(ctx, upstream), timeoutMs }];
}

/** What the restart's `role` condition sees this node lead. */
function leads(ctx: TickContext): Leads {
  if (!(ctx.leaderIsMe && ctx.lockValid)) return null;
  return ctx.standby !== null ? 'standby_leader' : 'primary';
}

/**
 * A restart asked of a stopped server is the start the loop would make anyway, now: one held
 * back by repeated failures (the operator fixed what failed) is not refused as "in progress",
 * and the answer waits for the start's outcome.
 */
function startOnRequest(ctx: TickContext, base: Decision, restart: NonNullable<TickContext['input']['commands']['restart']>): Decision {
  const problem = restartConditionProblem(restart.conditions, ctx.facts, leads(ctx));
  if (problem) return prepend(base, [reject(restart.id, 'restart_conditions_not_met', `restart conditions are not satisfied: ${problem}`)]);
  const timeout = restart.conditions.timeout;
  const actions = base.actions.map((a) => (a.type === 'start' && timeout !== undefined ? { ...a, timeoutMs: Math.max(1, timeout) * 1000 } : a));
  return { ...base, message: `${base.message}; starting on request`, actions: [...actions, { type: 'resolveCommand', id: restart.id, ok: true, message: 'started on request' }] };
}

/**
 * Adds API commands and the scheduled restart to a steady-state decision. A decision that
 * already starts a job (a demote, a follow...) wins: commands are refused as "in progress".
 */
export function withCommands(ctx: TickContext, base: Decision): Decision {
  const { restart, reinitialize } = ctx.input.commands;
  if (base.need !== null) return base;
  if (base.job === 'start' && restart && !ctx.running) return startOnRequest(ctx, base, restart);
  if (base.job !== null) return prepend(base, commandsWhileBusy(ctx, base.job));
  const actions = [...base.actions];
  const messages = [base.message];
  let wakeAt = base.wakeAt;
  const queued = ctx.input.memory.reinitializeQueued;
  if (reinitialize || queued) {
    const plan = reinitializeActions(ctx, reinitialize?.fromLeader ?? queued?.fromLeader ?? false);
    if (!Array.isArray(plan)) {
      if (reinitialize) actions.push(reject(reinitialize.id, plan.code, plan.message));
      if (queued) actions.push({ type: 'remember', patch: { reinitializeQueued: null } });
    } else {
      if (restart) actions.push(reject(restart.id, 'action_in_progress', 'reinitialize in progress'));
      if (reinitialize) actions.push({ type: 'resolveCommand', id: reinitialize.id, ok: true, message: 'reinitialize started' });
      return decision([...messages, 'reinitializing'].join('; '), [...actions, ...plan], { publish: base.publish, job: 'reinitialize', wakeAt });
    }
  }
  const timeoutOf = (seconds: number | undefined) => (seconds !== undefined ? Math.max(1, seconds) * 1000 : startTimeoutMs(ctx));
  if (restart) {
    const problem = restartConditionProblem(restart.conditions, ctx.facts, leads(ctx));
    if (problem) {
      actions.push(reject(restart.id, 'restart_conditions_not_met', `restart conditions are not satisfied: ${problem}`));
    } else {
      actions.push(...restartActions(ctx, timeoutOf(restart.conditions.timeout)), { type: 'resolveCommand', id: restart.id, ok: true, message: 'restarted successfully' });
      return decision([...messages, 'restarting on request'].join('; '), actions, { publish: base.publish, job: 'restart', wakeAt });
    }
  }
  const scheduled = restartScheduleFrom(ctx.input.memory.scheduledRestart);
  if (scheduled.kind === 'scheduled' && ctx.paused) {
    // Maintenance mode holds it: nothing restarts under an operator's hands; after a resume it
    // runs at its time, or is dropped as stale.
    messages.push(`restart scheduled at ${new Date(scheduled.at).toISOString()} held while paused`);
  } else if (scheduled.kind === 'scheduled') {
    const verdict = scheduleVerdict(scheduled.at, ctx.now, ctx.config.loop_wait);
    const clear: Action = { type: 'remember', patch: { scheduledRestart: null } };
    if (verdict === 'wait') {
      wakeAt = wakeAt === null ? scheduled.at : Math.min(wakeAt, scheduled.at);
    } else if (verdict === 'stale') {
      actions.push(clear);
      messages.push('dropped a scheduled restart that missed its time');
    } else {
      const problem = restartConditionProblem(scheduled.restart, ctx.facts, leads(ctx));
      actions.push(clear);
      if (problem) {
        messages.push(`scheduled restart cancelled: ${problem}`);
      } else {
        actions.push(...restartActions(ctx, timeoutOf(scheduled.restart.timeout)));
        return decision([...messages, 'running the scheduled restart'].join('; '), actions, { publish: base.publish, job: 'restart', wakeAt });
      }
    }
  } else if (ctx.input.memory.scheduledRestart !== null) {
    actions.push({ type: 'remember', patch: { scheduledRestart: null } });
  }
  return decision(messages.join('; '), actions, { publish: base.publish, rollback: base.rollback, wakeAt });
}
