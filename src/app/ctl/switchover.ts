import type { Cluster } from '../../domain/cluster/model/cluster.js';
import { apiError, callAny, confirmOrAbort, isOk, leaderMember, memberOrFail, preferring, readCluster } from './cluster-access.js';
import { clusterTable } from './cluster-table.js';
import type { CtlContext } from './context.js';
import { CtlError } from './errors.js';
import { responseMessage, type RestResponse } from './rest-client.js';
import { parseScheduledAt } from './schedule.js';
import { renderTable } from './table-format.js';

/** Options of `switchover`. */
export interface SwitchoverOptions {
  /** Expected current leader (refused when it is not). */
  readonly leader?: string;
  /** Member to promote; absent: every eligible member races. */
  readonly candidate?: string;
  /** ISO 8601 time or `now`. */
  readonly scheduled?: string;
  readonly force?: boolean;
  /** Check everything and say who would be promoted, changing nothing. */
  readonly dryRun?: boolean;
}

/** One row per member of a dry run's (or refusal's) `members`: eligible or why not. */
export function membersLines(body: unknown): string[] {
  const members = (body as { members?: unknown } | null)?.members;
  if (!Array.isArray(members)) return [];
  return members.map((m: { name?: unknown; eligible?: unknown; reasons?: { detail?: unknown }[]; lag_bytes?: unknown }) => {
    // A manual failover takes a lagging member too: what it has not received is what it would lose.
    const behind = typeof m.lag_bytes === 'number' && m.lag_bytes > 0 ? ` (${m.lag_bytes} bytes behind the last known primary position)` : '';
    const why = m.eligible === true ? `eligible${behind}` : (m.reasons ?? []).map((r) => String(r.detail)).join('; ') || 'not eligible';
    return `  ${String(m.name).padEnd(12)} ${why}`;
  });
}

/** Prints a dry run's answer: who would be promoted, then every member and why. */
export function reportDryRun(ctx: CtlContext, action: string, member: string, res: RestResponse): void {
  if (!isOk(res)) {
    const lines = membersLines(res.body);
    const err = apiError(`${action} (dry run)`, member, res);
    if (!lines.length) throw err;
    // The members' lines say what the message repeats in parentheses.
    const why = responseMessage(res).replace(/ \(.*\)$/s, '');
    throw new CtlError(err.code, `${why} (dry run: nothing was changed)\n${lines.join('\n')}`);
  }
  ctx.out(`${responseMessage(res)} (dry run: nothing was changed)`);
  const lines = membersLines(res.body);
  if (lines.length) ctx.out(lines.join('\n'));
}

/** How long an immediate switchover/failover may take (the API waits `2*max(10, loop_wait)` s), plus slack. */
export function actionTimeoutMs(cluster: Cluster): number {
  const lw = Number(cluster.config?.value['loop_wait'] ?? 10);
  return (2 * Math.max(10, Number.isFinite(lw) ? lw : 10) + 30) * 1000;
}

/** Whether the cluster is in maintenance mode. */
export function isPaused(cluster: Cluster): boolean {
  return cluster.config?.value['pause'] === true;
}

/** Prints an action's answer, and the table after an immediate success. */
export async function reportOutcome(ctx: CtlContext, action: string, member: string, res: RestResponse): Promise<void> {
  if (res.status === 409 && (res.body as { error?: unknown } | null)?.error === 'already_scheduled') {
    throw new CtlError('already_scheduled', `${action} on ${member} refused: ${responseMessage(res)} (cancel it with "wardenctl flush switchover", or give --force to replace it)`);
  }
  if (!isOk(res)) throw apiError(action, member, res);
  ctx.out(responseMessage(res));
  if (res.status === 200) ctx.out(renderTable(clusterTable(ctx.scope, await readCluster(ctx)), 'pretty'));
}

/** `switchover`: planned change of leader, now or at a scheduled time (POST /switchover). */
export async function switchover(ctx: CtlContext, opts: SwitchoverOptions = {}): Promise<void> {
  // The command line is checked before the DCS is asked: a bad time is a usage error, at once.
  const at = parseScheduledAt(opts.scheduled, ctx.now());
  const cluster = await readCluster(ctx);
  const leader = leaderMember(cluster);
  if (opts.leader && opts.leader !== leader.name) {
    throw new CtlError('not_leader', `${opts.leader} is not the leader of cluster ${ctx.scope} (the leader is ${leader.name})`);
  }
  if (opts.candidate !== undefined) {
    memberOrFail(cluster, opts.candidate);
    if (opts.candidate === leader.name) throw new CtlError('candidate_is_leader', `${opts.candidate} is already the leader`);
  }
  if (isPaused(cluster)) {
    if (at) throw new CtlError('paused', 'cannot schedule a switchover while the cluster is paused');
    if (!opts.candidate) throw new CtlError('paused', 'the cluster is paused: a switchover needs --candidate');
  }
  if (opts.dryRun) {
    const body: Record<string, unknown> = { leader: leader.name, dry_run: true };
    if (opts.candidate) body['candidate'] = opts.candidate;
    if (at) body['scheduled_at'] = at;
    const { member, res } = await callAny(ctx, preferring(cluster, leader.name, opts.candidate), 'POST', 'switchover', body, { timeoutMs: actionTimeoutMs(cluster) });
    return reportDryRun(ctx, 'switchover', member.name, res);
  }
  const pending = cluster.failover?.scheduledAt ? cluster.failover : null;
  if (pending && !opts.force) {
    throw new CtlError(
      'already_scheduled',
      `a switchover is already scheduled at ${pending.scheduledAt} (from ${pending.leader ?? 'the leader'} to ${pending.member ?? 'the best eligible member'}): cancel it with "wardenctl flush switchover", or give --force to replace it`,
    );
  }
  const to = opts.candidate ?? 'the best eligible member';
  await confirmOrAbort(ctx, opts.force, `Switch over cluster ${ctx.scope} from ${leader.name} to ${to}${at ? ` at ${at}` : ' now'}?`);
  const body: Record<string, string> = { leader: leader.name };
  if (opts.candidate) body['candidate'] = opts.candidate;
  if (at) body['scheduled_at'] = at;
  const order = preferring(cluster, leader.name, opts.candidate);
  if (pending) {
    // --force: the pending switchover is cancelled first (the agents refuse to replace it).
    const { member, res } = await callAny(ctx, order, 'DELETE', 'switchover');
    if (!isOk(res) && res.status !== 404) throw apiError('cancelling the scheduled switchover', member.name, res);
    ctx.out(`Cancelled the switchover scheduled at ${pending.scheduledAt}`);
  }
  const { member, res } = await callAny(ctx, order, 'POST', 'switchover', body, { timeoutMs: actionTimeoutMs(cluster) });
  await reportOutcome(ctx, 'switchover', member.name, res);
}
