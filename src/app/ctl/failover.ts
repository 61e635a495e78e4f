import { callAny, confirmOrAbort, memberOrFail, preferring, readCluster } from './cluster-access.js';
import type { CtlContext } from './context.js';
import { CtlError } from './errors.js';
import { actionTimeoutMs, reportOutcome } from './switchover.js';

/** Options of `failover`. */
export interface FailoverOptions {
  /** Member to promote (required). */
  readonly candidate?: string;
  readonly force?: boolean;
}

/** `failover`: promote a named member, also when the cluster has no leader (POST /failover). */
export async function failover(ctx: CtlContext, opts: FailoverOptions = {}): Promise<void> {
  if (!opts.candidate) throw new CtlError('no_candidate', 'failover needs --candidate NAME (use switchover for a planned change)');
  const cluster = await readCluster(ctx);
  memberOrFail(cluster, opts.candidate);
  const leader = cluster.leader?.name ?? null;
  if (leader === opts.candidate) throw new CtlError('candidate_is_leader', `${opts.candidate} is already the leader`);
  const warning = leader ? ` The cluster has a healthy leader (${leader}): switchover is the normal choice.` : '';
  await confirmOrAbort(ctx, opts.force, `Fail over cluster ${ctx.scope} to ${opts.candidate}? A failover can lose recent writes.${warning}`);
  const { member, res } = await callAny(ctx, preferring(cluster, opts.candidate, leader), 'POST', 'failover', { candidate: opts.candidate }, { timeoutMs: actionTimeoutMs(cluster) });
  await reportOutcome(ctx, 'failover', member.name, res);
}
