import type { Member } from '../../domain/cluster/model/cluster.js';
import { callMember, confirmOrAbort, isOk, parseRoleFilter, readCluster, selectMembers } from './cluster-access.js';
import type { CtlContext } from './context.js';
import { CtlError } from './errors.js';
import { responseMessage } from './rest-client.js';
import { parseDurationSeconds, parseScheduledAt } from './schedule.js';
import { isPaused } from './switchover.js';

/** Options of `restart`. */
export interface RestartOptions {
  /** leader | primary | standby-leader | replica | any */
  readonly role?: string;
  /** Restart one member only, picked at random among those selected. */
  readonly any?: boolean;
  /** Only members with a pending restart (and the API re-checks it). */
  readonly pending?: boolean;
  /** ISO 8601 time or `now`. */
  readonly scheduled?: string;
  /** Only if the server version is lower than this (`X.Y` or `X.Y.Z`). */
  readonly dbVersion?: string;
  /** Seconds (or `30s`, `5min`) to wait for the database to accept connections. */
  readonly timeout?: string | number;
  /** No confirmation; a restart already scheduled on a member is replaced. */
  readonly force?: boolean;
  /** Picks the member of `--any` (default: Math.random). */
  readonly random?: () => number;
}

/** The `error` code of an API answer, if any. */
function errorCode(res: { body: unknown }): string | null {
  const b = res.body as { error?: unknown } | null;
  return b && typeof b === 'object' && typeof b.error === 'string' ? b.error : null;
}

/** Whether the member's own status (GET /node) shows a pending restart; false when it does not answer. */
async function reportsPendingRestart(ctx: CtlContext, m: Member): Promise<boolean> {
  try {
    const res = await callMember(ctx, m, 'GET', 'node', undefined, { timeoutMs: 5000 });
    return isOk(res) && (res.body as { pending_restart?: unknown } | null)?.pending_restart === true;
  } catch (e) {
    if (e instanceof CtlError) return false;
    throw e;
  }
}

/** Runs one action on each member in turn; failures are printed, then summarised as one error. */
export async function onEachMember(ctx: CtlContext, action: string, members: readonly Member[], run: (m: Member) => Promise<string>): Promise<void> {
  const failed: string[] = [];
  for (const m of members) {
    try {
      ctx.out(`${m.name}: ${await run(m)}`);
    } catch (e) {
      if (!(e instanceof CtlError)) throw e;
      ctx.warn(`${m.name}: ${e.message}`);
      failed.push(m.name);
    }
  }
  if (failed.length) throw new CtlError('action_failed', `${action} failed on ${failed.length} of ${members.length} member(s): ${failed.join(', ')}`);
}

/** Throws a CtlError for a non-2xx answer; returns the answer's message otherwise. */
export function okMessage(res: { status: number; body: unknown }): string {
  if (!isOk(res)) throw new CtlError('api_error', `HTTP ${res.status}: ${responseMessage(res)}`);
  return responseMessage(res);
}

/** `restart`: restart the database on members (POST /restart), now or scheduled, with conditions. */
export async function restart(ctx: CtlContext, names: readonly string[], opts: RestartOptions = {}): Promise<void> {
  // The command line is checked before the DCS is asked: its errors are usage errors, at once.
  const role = parseRoleFilter(opts.role);
  const at = parseScheduledAt(opts.scheduled, ctx.now());
  if (opts.dbVersion !== undefined && !/^\d+\.\d+(\.\d+)?$/.test(opts.dbVersion)) {
    throw new CtlError('invalid_db_version', `--db-version must look like X.Y or X.Y.Z; got ${opts.dbVersion}`);
  }
  const timeout = opts.timeout === undefined ? undefined : parseDurationSeconds(opts.timeout, '--timeout');
  const cluster = await readCluster(ctx);
  let targets = selectMembers(cluster, names, role);
  if (at && isPaused(cluster)) throw new CtlError('paused', 'cannot schedule a restart while the cluster is paused');
  // A scheduled restart is not filtered now: each member checks for a pending restart at the
  // time (a parameter changed just before, or a member down now, would be left out).
  if (opts.pending && !at) {
    // A member's record in the DCS is written once per loop, its own status at once: ask the
    // members the record does not flag yet, so a restart just made pending is not missed.
    const pending = await Promise.all(targets.map(async (m) => m.pendingRestart || (await reportsPendingRestart(ctx, m))));
    targets = targets.filter((_, i) => pending[i]);
    if (!targets.length) {
      ctx.out('No selected member has a pending restart: nothing to do');
      return;
    }
  }
  if (opts.any) targets = [targets[Math.floor((opts.random ?? Math.random)() * targets.length)] ?? targets[0]!];
  const already = at ? targets.filter((m) => m.scheduledRestart) : [];
  if (already.length && !opts.force) {
    throw new CtlError(
      'already_scheduled',
      `a restart is already scheduled on ${already.map((m) => `${m.name} (at ${m.scheduledRestart!.schedule})`).join(', ')}: cancel it with "wardenctl flush restart", or give --force to replace it`,
    );
  }
  const what = `${targets.map((m) => m.name).join(', ')} ${at ? `at ${at}` : 'now'}`;
  const conditions = [opts.pending ? 'a restart is pending' : null, opts.dbVersion ? `the server version is below ${opts.dbVersion}` : null].filter(Boolean);
  await confirmOrAbort(ctx, opts.force, `Restart ${what}${conditions.length ? ` (only where ${conditions.join(' and ')})` : ''}?`);
  const body: Record<string, unknown> = {};
  if (opts.pending) body['restart_pending'] = true;
  if (opts.dbVersion) body['db_version'] = opts.dbVersion;
  if (timeout !== undefined) body['timeout'] = timeout;
  if (at) body['schedule'] = at;
  const startTimeout = Number(cluster.config?.value['primary_start_timeout'] ?? 300);
  const timeoutMs = ((timeout ?? (Number.isFinite(startTimeout) ? startTimeout : 300)) + 60) * 1000;
  await onEachMember(ctx, 'restart', targets, async (m) => {
    let replaced = '';
    if (at && opts.force && m.scheduledRestart) {
      const del = await callMember(ctx, m, 'DELETE', 'restart');
      if (del.status !== 404) okMessage(del);
      replaced = `the restart scheduled at ${m.scheduledRestart.schedule} is replaced; `;
    }
    const res = await callMember(ctx, m, 'POST', 'restart', body, { timeoutMs });
    // The member's own conditions said no: what was asked for ("only where..."), not a failure.
    if (res.status === 503 && errorCode(res) === 'restart_conditions_not_met') {
      return opts.pending ? 'no restart pending any more: nothing done' : `not restarted: ${responseMessage(res).replace(/^restart conditions are not satisfied: /, '')}`;
    }
    if (res.status === 409) throw new CtlError('already_scheduled', `${responseMessage(res)}: a restart is already scheduled (cancel it with "wardenctl flush restart", or give --force to replace it)`);
    return replaced + okMessage(res);
  });
}
