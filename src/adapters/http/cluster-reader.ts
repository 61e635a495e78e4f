import { parseCluster, type Cluster } from '../../domain/cluster/model/cluster.js';
import type { DcsSnapshot } from '../../domain/cluster/model/dcs-keys.js';
import type { Dcs } from '../../ports/dcs.js';
import type { Logger } from '../../ports/logger.js';

/** Reads and parses the cluster from the DCS (DcsUnavailableError -> 503); malformed keys are logged and treated as absent. */
export async function readCluster(dcs: Dcs, logger: Logger): Promise<{ cluster: Cluster; raw: DcsSnapshot }> {
  const raw = await dcs.readAll();
  const { cluster, problems } = parseCluster(raw);
  for (const p of problems) logger.warn('ignoring malformed DCS key', { path: p.path, problem: p.message });
  return { cluster, raw };
}
