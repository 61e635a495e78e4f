import { clusterDocument } from '../../domain/cluster/model/cluster-document.js';
import { callAny, confirmOrAbort, memberOrFail, preferring, readCluster } from './cluster-access.js';
import type { CtlContext } from './context.js';
import { CtlError } from './errors.js';
import { actionTimeoutMs, reportDryRun, reportOutcome } from './switchover.js';

/** Options of `failover`. */
export interface FailoverOptions {
  /** Member to promote (required). */
  readonly candidate?: string;
  /** The current leader: the API then handles the request as a switchover (checked here first). */
  readonly leader?: string;
  readonly force?: boolean;
  /** Check everything and say whether the candidate would be promoted, changing nothing. */
  readonly dryRun?: boolean;
}

/** `failover`: promote a named member, also when the cluster has no leader (POST /failover). */
export async function failover(ctx: CtlContext, opts: FailoverOptions = {}): Promise<void> {
  if (!opts.candidate) throw new CtlError('no_candidate', 'failover needs --candidate NAME (use switchover for a planned change)');
  const cluster = await readCluster(ctx);
  memberOrFail(cluster, opts.candidate);
  const leader = cluster.leader?.name ?? null;
  if (leader === opts.candidate) throw new CtlError('candidate_is_leader', `${opts.candidate} is already the leader`);
  if (opts.leader !== undefined && opts.leader !== leader) {
    throw new CtlError('not_leader', `${opts.leader} is not the leader of cluster ${ctx.scope} (${leader ? `the leader is ${leader}` : 'it has no leader'})`);
  }
  const body: Record<string, string | boolean> = { candidate: opts.candidate };
  if (opts.leader !== undefined) body['leader'] = opts.leader;
  if (opts.dryRun) {
    body['dry_run'] = true;
    const { member, res } = await callAny(ctx, preferring(cluster, opts.candidate, leader), 'POST', 'failover', body, { timeoutMs: actionTimeoutMs(cluster) });
    return reportDryRun(ctx, opts.leader !== undefined ? 'switchover' : 'failover', member.name, res);
  }
  if (opts.leader !== undefined) {
    // With the leader named, the agents handle the request as a switchover.
    await confirmOrAbort(ctx, opts.force, `Switch over cluster ${ctx.scope} from ${opts.leader} to ${opts.candidate} now?`);
  } else {
    const warning = leader ? ` The cluster has a healthy leader (${leader}): switchover is the normal choice.` : '';
    const lag = clusterDocument(ctx.scope, cluster).members.find((m) => m.name === opts.candidate)?.lag;
    const loses = typeof lag === 'number' && lag > 0 ? ` ${opts.candidate} is ${lag} bytes behind the last known primary position: writes it has not received are lost.` : ' A failover can lose recent writes.';
    // With a dead leader the last known position is stale: only the synchronous standbys are
    // known to hold every acknowledged commit.
    const syncStandbys = cluster.config?.value['synchronous_mode'] !== undefined && cluster.config.value['synchronous_mode'] !== false ? (cluster.sync?.syncStandby ?? []) : [];
    const asynchronous = syncStandbys.length > 0 && !syncStandbys.includes(opts.candidate)
      ? ` ${opts.candidate} is an asynchronous node: commits acknowledged by the synchronous standby${syncStandbys.length > 1 ? 's' : ''} (${syncStandbys.join(', ')}) may be missing on it.`
      : '';
    await confirmOrAbort(ctx, opts.force, `Fail over cluster ${ctx.scope} to ${opts.candidate}?${asynchronous}${loses}${warning}`);
  }
  const { member, res } = await callAny(ctx, preferring(cluster, opts.candidate, leader), 'POST', 'failover', body, { timeoutMs: actionTimeoutMs(cluster) });
  await reportOutcome(ctx, opts.leader !== undefined ? 'switchover' : 'failover', member.name, res);
}
