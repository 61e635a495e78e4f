import { validateConfigOrThrow, type RawConfig } from '../domain/cluster/config/config.js';
import { ValidationError } from '../domain/errors.js';
import type { CommandDeps } from './command-deps.js';
import { CommandError } from './command-error.js';

/** How a new configuration is written: unconditionally, or only over the revision it was based on. */
export interface ReplaceConfigInput {
  readonly config: RawConfig;
  /** undefined: replace whatever is stored; null: only when nothing is; a revision: only when still that one. */
  readonly ifRevision?: string | null;
}

/** Validates a whole configuration; ValidationError `invalid_config` listing every problem. */
export function checkConfig(config: RawConfig): void {
  try {
    validateConfigOrThrow(config);
  } catch (err) {
    if (err instanceof ValidationError) throw new ValidationError(err.problems, 'invalid_config');
    throw err;
  }
}

/**
 * Replaces the dynamic configuration (`PUT /config`, wardenctl edit-config): validated
 * first (nothing written when invalid), then written, and the agent applies it at once.
 * Throws ValidationError `invalid_config`, CommandError `config_conflict` when the revision
 * moved on, DcsUnavailableError.
 */
export async function replaceConfig(deps: Pick<CommandDeps, 'store' | 'agent'>, input: ReplaceConfigInput): Promise<RawConfig> {
  checkConfig(input.config);
  if (!(await deps.store.writeConfig(input.config, input.ifRevision))) {
    throw new CommandError('config_conflict', 'the configuration was changed by someone else meanwhile; read it again and retry');
  }
  deps.agent?.wake();
  await deps.agent?.refreshView().catch(() => undefined);
  return input.config;
}
