import type { RawConfig } from '../domain/cluster/config/config.js';
import type { Cluster } from '../domain/cluster/model/cluster.js';
import type { CommandDeps } from './command-deps.js';

/** The stored dynamic configuration and the revision a compare-and-set write must name (null: nothing stored yet). */
export interface StoredConfigView {
  readonly value: RawConfig;
  readonly revision: string | null;
  /** The key holds no configuration (not a JSON object): `value` is then `{}`, which is not what the agents decide on. */
  readonly unreadable?: true;
}

/** The dynamic configuration as stored (`GET /config`); `{}` when none is. Throws DcsUnavailableError. */
export async function readConfig(deps: Pick<CommandDeps, 'store'>): Promise<StoredConfigView> {
  return storedConfigView(await deps.store.read());
}

/** The dynamic configuration `cluster` holds; `{}` when none. */
export function storedConfigView(cluster: Cluster): StoredConfigView {
  const config = cluster.config;
  if (!config) return { value: {}, revision: null };
  return config.unreadable ? { value: config.value, revision: config.revision, unreadable: true } : { value: config.value, revision: config.revision };
}
