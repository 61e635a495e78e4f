import { mergePatch, type RawConfig } from '../domain/cluster/config/config.js';
import type { CommandDeps } from './command-deps.js';
import { storedConfigView } from './read-config.js';
import { replaceConfig } from './replace-config.js';

/**
 * Merges a fragment into the dynamic configuration (`PATCH /config`; a key set to null is
 * removed, lists are replaced whole), validates the result and writes it with compare-and-set
 * on the revision read. Returns the whole new configuration. Throws ValidationError
 * `invalid_config`, CommandError `config_conflict` on a concurrent change, DcsUnavailableError.
 */
export async function patchConfig(deps: Pick<CommandDeps, 'store' | 'agent'>, patch: RawConfig): Promise<RawConfig> {
  const cluster = await deps.store.read();
  const stored = storedConfigView(cluster);
  return replaceConfig(deps, { config: mergePatch(stored.value, patch), ifRevision: stored.revision }, cluster);
}
