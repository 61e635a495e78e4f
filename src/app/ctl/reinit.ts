import type { Member } from '../../domain/cluster/model/cluster.js';
import { callMember, clusterRole, confirmOrAbort, memberOrFail, readCluster } from './cluster-access.js';
import type { CtlContext } from './context.js';
import { CtlError, RestUnreachableError } from './errors.js';
import { responseMessage } from './rest-client.js';
import { okMessage, onEachMember } from './restart.js';

/** Options of `reinit`. */
export interface ReinitOptions {
  /** Take the base backup from the leader rather than any replica. */
  readonly fromLeader?: boolean;
  /** Wait until each member runs again on a fresh copy. */
  readonly wait?: boolean;
  /** No confirmation; and the agent proceeds even while another action (e.g. recovery) runs. */
  readonly force?: boolean;
}

/** Poll interval of `--wait`. */
export const REINIT_POLL_MS = 1000;

/** The member's `postmaster_start_time` and `state` from GET /node; nulls when it does not answer. */
async function nodeState(ctx: CtlContext, m: Member): Promise<{ state: string | null; started: string | null }> {
  try {
    const res = await callMember(ctx, m, 'GET', 'node', undefined, { timeoutMs: 5000 });
    const b = (res.body ?? {}) as Record<string, unknown>;
    return { state: typeof b['state'] === 'string' ? b['state'] : null, started: typeof b['postmaster_start_time'] === 'string' ? b['postmaster_start_time'] : null };
  } catch (e) {
    if (e instanceof RestUnreachableError) return { state: null, started: null };
    throw e;
  }
}

/** Database states in which a fresh copy does not run and the agent only retries with growing pauses. */
const FAILED_STATES = new Set(['start failed', 'restart failed']);

/**
 * Waits until the member runs a postmaster started after `before` (a new one: the
 * reinitialized copy). Once the job has shown itself (a state other than the one before),
 * a start that fails ends the wait with an error instead of polling for ever.
 */
async function waitRunningAgain(ctx: CtlContext, m: Member, before: { state: string | null; started: string | null }): Promise<void> {
  let sawDown = false;
  let progressed = false;
  for (;;) {
    if (ctx.signal.aborted) throw new CtlError('interrupted', `stopped waiting for ${m.name}; the reinitialization goes on in the background`);
    const now = await nodeState(ctx, m);
    if (now.state !== 'running') sawDown = true;
    if (now.state !== null && now.state !== before.state) progressed = true;
    if (now.state === 'running' && now.started && (before.started ? now.started !== before.started : sawDown)) return;
    if (progressed && now.state !== null && FAILED_STATES.has(now.state)) {
      throw new CtlError('start_failed', `the new copy of ${m.name} does not start (state ${now.state}; the agent retries with growing pauses): see the agent's log for the server's error`);
    }
    await ctx.sleep(REINIT_POLL_MS);
  }
}

/** `reinit`: rebuild replicas from scratch (POST /reinitialize), optionally waiting for the end. */
export async function reinit(ctx: CtlContext, names: readonly string[], opts: ReinitOptions = {}): Promise<void> {
  if (!names.length) throw new CtlError('no_members', 'reinit needs the names of the members to reinitialize');
  const cluster = await readCluster(ctx);
  const targets = [...new Set(names)].map((n) => memberOrFail(cluster, n));
  for (const m of targets) {
    const r = clusterRole(cluster, m);
    if (r === 'leader' || r === 'standby_leader') throw new CtlError('is_leader', `${m.name} is the leader: only replicas can be reinitialized`);
  }
  const whose = targets.length === 1 ? 'Its data directory is' : 'Their data directories are';
  await confirmOrAbort(ctx, opts.force, `Reinitialize ${targets.map((m) => m.name).join(', ')}? ${whose} wiped and copied again.`);
  await onEachMember(ctx, 'reinitialize', targets, async (m) => {
    const before = opts.wait ? await nodeState(ctx, m) : { state: null, started: null };
    const body = { force: !!opts.force, 'from-leader': !!opts.fromLeader };
    let res = await callMember(ctx, m, 'POST', 'reinitialize', body);
    if (res.status === 503 && !opts.force && /progress|running/i.test(responseMessage(res))) {
      if (await ctx.confirm(`${m.name}: ${responseMessage(res)}. Cancel it and reinitialize anyway?`)) {
        res = await callMember(ctx, m, 'POST', 'reinitialize', { ...body, force: true });
      }
    }
    const msg = okMessage(res);
    if (!opts.wait) return msg;
    ctx.out(`${m.name}: ${msg}; waiting for it to complete`);
    await waitRunningAgain(ctx, m, before);
    return 'reinitialize completed';
  });
}
