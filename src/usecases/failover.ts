import type { CommandDeps } from './command-deps.js';
import { runManualFailover, type ManualFailoverInput, type ManualFailoverResult } from './manual-failover-flow.js';

/**
 * A manual failover to `candidate` (`POST /failover`), usable without a leader; naming the
 * leader makes it a switchover. See runManualFailover for the errors.
 */
export function failover(deps: CommandDeps, input: ManualFailoverInput): Promise<ManualFailoverResult> {
  return runManualFailover(deps, 'failover', input);
}
