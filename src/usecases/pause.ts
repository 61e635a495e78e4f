import type { RawConfig } from '../domain/cluster/config/config.js';
import type { CommandDeps } from './command-deps.js';
import { patchConfig } from './patch-config.js';

/**
 * Maintenance mode on (`paused` true) or off: the `pause` setting of the dynamic configuration,
 * written like any other patch. Returns the new configuration. Errors as patchConfig.
 */
export function setPause(deps: Pick<CommandDeps, 'store' | 'agent'>, paused: boolean): Promise<RawConfig> {
  return patchConfig(deps, { pause: paused ? true : null });
}
