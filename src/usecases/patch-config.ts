import { mergePatch, type RawConfig } from '../domain/cluster/config/config.js';
import type { CommandDeps } from './command-deps.js';
import { CommandError } from './command-error.js';
import { storedConfigView } from './read-config.js';
import { replaceConfig } from './replace-config.js';

/**
 * Merges a fragment into the dynamic configuration (`PATCH /config`; a key set to null is
 * removed, lists are replaced whole), validates the result and writes it with compare-and-set
 * on the revision read. Returns the whole new configuration. Throws ValidationError
 * `invalid_config`, CommandError `config_conflict` on a concurrent change, `config_not_stored`
 * before the cluster has a configuration, `config_unreadable` when the stored one cannot be read,
 * DcsUnavailableError.
 */
export async function patchConfig(deps: Pick<CommandDeps, 'store' | 'agent'>, patch: RawConfig): Promise<RawConfig> {
  const cluster = await deps.store.read();
  // The bootstrapping member writes its bootstrap configuration only where none is stored (its
  // server may already answer as primary): a patch written first would leave the cluster on
  // the defaults with just the patch, silently dropping the operator's bootstrap settings.
  if (cluster.config === null) {
    throw new CommandError('config_not_stored', 'the cluster has no configuration stored yet (its bootstrap writes it): retry in a moment');
  }
  // Merged into the empty value it reads as, a patch would write the defaults plus itself and turn
  // off whatever the broken value was meant to keep on (synchronous mode, maintenance mode).
  if (cluster.config.unreadable) {
    throw new CommandError('config_unreadable', 'the stored configuration cannot be read (not a JSON object): replace it whole (PUT /config, wardenctl edit-config --replace) before changing parts of it');
  }
  const stored = storedConfigView(cluster);
  return replaceConfig(deps, { config: mergePatch(stored.value, patch), ifRevision: stored.revision }, cluster);
}
