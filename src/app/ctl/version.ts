import { callMember, memberOrFail, readCluster } from './cluster-access.js';
import type { CtlContext } from './context.js';
import { CtlError } from './errors.js';

import { formatServerVersion } from '../../domain/cluster/rules/restart-conditions.js';
import { ctlVersion } from './ctl-version.js';

export { ctlVersion } from './ctl-version.js';

export { formatServerVersion };

/**
 * `version`: wardenctl's version, then each member's agent and server version when a
 * cluster is configured. A member that is not in the cluster is an error before any member
 * is asked; one that does not answer is reported and makes the command fail at the end.
 */
export async function version(out: (s: string) => void, ctx: CtlContext | null, names: readonly string[] = []): Promise<void> {
  out(`wardenctl version ${ctlVersion()}`);
  if (!ctx) return;
  const cluster = await readCluster(ctx);
  const members = names.length ? [...new Set(names)].map((n) => memberOrFail(cluster, n)) : cluster.members;
  const silent: string[] = [];
  for (const m of members) {
    try {
      const res = await callMember(ctx, m, 'GET', 'node', undefined, { timeoutMs: 5000 });
      const b = (res.body ?? {}) as { svc?: { version?: unknown }; server_version?: unknown };
      const agent = typeof b.svc?.version === 'string' ? `warden ${b.svc.version}` : 'warden (version unknown)';
      const db = typeof b.server_version === 'number' ? `, PostgreSQL ${formatServerVersion(b.server_version)}` : '';
      out(`${m.name}: ${agent}${db}`);
    } catch (e) {
      if (!(e instanceof CtlError)) throw e;
      out(`${m.name}: no answer (${e.message})`);
      silent.push(m.name);
    }
  }
  if (silent.length) throw new CtlError('api_unreachable', `no answer from ${silent.join(', ')}`);
}
