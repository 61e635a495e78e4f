import type { CommandDeps } from './command-deps.js';
import { runManualFailover, type ManualFailoverInput, type ManualFailoverResult } from './manual-failover-flow.js';

/** A planned change of leader (`POST /switchover`), now or at `scheduledAt`. See runManualFailover for the errors. */
export function switchover(deps: CommandDeps, input: ManualFailoverInput): Promise<ManualFailoverResult> {
  return runManualFailover(deps, 'switchover', input);
}
