import { callMember, confirmOrAbort, parseRoleFilter, readCluster, selectMembers } from './cluster-access.js';
import type { CtlContext } from './context.js';
import { okMessage, onEachMember } from './restart.js';

/** Options of `reload`. */
export interface ReloadOptions {
  readonly role?: string;
  readonly force?: boolean;
}

/** `reload`: ask members to re-read their local configuration file (POST /reload). */
export async function reload(ctx: CtlContext, names: readonly string[], opts: ReloadOptions = {}): Promise<void> {
  const cluster = await readCluster(ctx);
  const targets = selectMembers(cluster, names, parseRoleFilter(opts.role));
  await confirmOrAbort(ctx, opts.force, `Reload the configuration of ${targets.map((m) => m.name).join(', ')}?`);
  await onEachMember(ctx, 'reload', targets, async (m) => okMessage(await callMember(ctx, m, 'POST', 'reload')));
}
