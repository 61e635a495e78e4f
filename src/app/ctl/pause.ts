import type { Cluster, Member } from '../../domain/cluster/model/cluster.js';
import { apiError, callAny, callMember, isOk, preferring, readCluster } from './cluster-access.js';
import type { CtlContext } from './context.js';
import { CtlError, RestUnreachableError } from './errors.js';
import { isPaused } from './switchover.js';

/** Options of `pause` / `resume`. */
export interface PauseOptions {
  /** Wait until every member reports the new state. */
  readonly wait?: boolean;
}

/** Poll interval of `--wait`. */
export const PAUSE_POLL_MS = 1000;

/** How long `--wait` waits: every agent should see the change within a loop or two. */
function waitLimitMs(cluster: Cluster): number {
  const num = (k: string, d: number) => {
    const v = Number(cluster.config?.value[k] ?? d);
    return Number.isFinite(v) ? v : d;
  };
  return Math.max(30, 2 * num('loop_wait', 10) + num('ttl', 30)) * 1000;
}

/** Whether the member's GET /node reports `pause` as wanted; null when it does not answer. */
async function reportsPause(ctx: CtlContext, m: Member, paused: boolean): Promise<boolean | null> {
  try {
    const res = await callMember(ctx, m, 'GET', 'node', undefined, { timeoutMs: 5000 });
    if (!isOk(res) || !res.body || typeof res.body !== 'object') return null;
    return ((res.body as Record<string, unknown>)['pause'] === true) === paused;
  } catch (e) {
    if (e instanceof RestUnreachableError || (e instanceof CtlError && e.code === 'no_api_url')) return null;
    throw e;
  }
}

/** `pause` (true) / `resume` (false): set or clear maintenance mode (PATCH /config `pause`). */
export async function setPause(ctx: CtlContext, paused: boolean, opts: PauseOptions = {}): Promise<void> {
  const cluster = await readCluster(ctx);
  if (!cluster.members.length) throw new CtlError('no_members', `cluster ${ctx.scope} has no members`);
  if (isPaused(cluster) === paused) throw new CtlError(paused ? 'already_paused' : 'not_paused', paused ? 'the cluster is already paused' : 'the cluster is not paused');
  const { member, res } = await callAny(ctx, preferring(cluster, cluster.leader?.name), 'PATCH', 'config', { pause: paused ? true : null });
  if (!isOk(res)) throw apiError(paused ? 'pause' : 'resume', member.name, res);
  ctx.out(paused ? 'Success: cluster management is paused' : 'Success: cluster management is resumed');
  if (!opts.wait) return;
  ctx.out(`Waiting for every member to report that it is ${paused ? 'paused' : 'resumed'}...`);
  const deadline = ctx.now() + waitLimitMs(cluster);
  for (;;) {
    const now = await readCluster(ctx);
    const pending: string[] = [];
    for (const m of now.members) {
      const ok = await reportsPause(ctx, m, paused);
      if (ok !== true) pending.push(ok === null ? `${m.name} (no answer)` : m.name);
    }
    if (!pending.length) {
      ctx.out(`Every member reports that it is ${paused ? 'paused' : 'resumed'}`);
      return;
    }
    if (ctx.signal.aborted) throw new CtlError('interrupted', `stopped waiting; not yet confirmed by ${pending.join(', ')}`);
    if (ctx.now() >= deadline) throw new CtlError('wait_timeout', `${paused ? 'pause' : 'resume'} is not confirmed by ${pending.join(', ')} after ${Math.round(waitLimitMs(cluster) / 1000)}s`);
    await ctx.sleep(PAUSE_POLL_MS);
  }
}
