import type { RawConfig } from '../domain/cluster/config/config.js';
import type { CommandDeps } from './command-deps.js';

/** The stored dynamic configuration and the revision a compare-and-set write must name (null: nothing stored yet). */
export interface StoredConfigView {
  readonly value: RawConfig;
  readonly revision: string | null;
}

/** The dynamic configuration as stored (`GET /config`); `{}` when none is. Throws DcsUnavailableError. */
export async function readConfig(deps: Pick<CommandDeps, 'store'>): Promise<StoredConfigView> {
  const config = (await deps.store.read()).config;
  return config ? { value: config.value, revision: config.revision } : { value: {}, revision: null };
}
