import { resolveConfig, validateConfigOrThrow, type RawConfig } from '../domain/cluster/config/config.js';
import { membersFencedBy } from '../domain/cluster/ha/fence-window.js';
import type { Cluster } from '../domain/cluster/model/cluster.js';
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
 * New ttl or loop_wait that leave a member's fencer (or watchdog device) a window no longer
 * than loop_wait would have it stop that member's healthy primary between two renewals:
 * refused (ValidationError `invalid_config`), naming each member that its old timings spared.
 * Timings left as they were are never refused, so unrelated changes go through.
 */
function refuseFencingTimings(cluster: Cluster, config: RawConfig): void {
  const before = resolveConfig(cluster.config?.value);
  const after = resolveConfig(config);
  if (before.ttl === after.ttl && before.loop_wait === after.loop_wait) return;
  const spared = new Set(membersFencedBy(cluster.members, before.ttl, before.loop_wait).map((p) => p.member));
  const problems = membersFencedBy(cluster.members, after.ttl, after.loop_wait)
    .filter((p) => !spared.has(p.member))
    .map((p) => ({ path: 'ttl', message: `member ${p.member}'s watchdog.safety_margin: ${p.problem}` }));
  if (problems.length) throw new ValidationError(problems, 'invalid_config');
}

/**
 * Replaces the dynamic configuration (`PUT /config`, wardenctl edit-config): validated
 * first (nothing written when invalid, or when its timings would have a member's fencer stop a
 * healthy primary), then written, and the agent applies it at once. `current`: the cluster the
 * caller just read (read here otherwise).
 * Throws ValidationError `invalid_config`, CommandError `config_conflict` when the revision
 * moved on, DcsUnavailableError.
 */
export async function replaceConfig(deps: Pick<CommandDeps, 'store' | 'agent'>, input: ReplaceConfigInput, current?: Cluster): Promise<RawConfig> {
  checkConfig(input.config);
  refuseFencingTimings(current ?? (await deps.store.read()), input.config);
  if (!(await deps.store.writeConfig(input.config, input.ifRevision))) {
    throw new CommandError('config_conflict', 'the configuration was changed by someone else meanwhile; read it again and retry');
  }
  deps.agent?.wake();
  await deps.agent?.refreshView().catch(() => undefined);
  return input.config;
}
