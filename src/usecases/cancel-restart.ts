import { cancelRestart, restartScheduleFrom } from '../domain/cluster/rules/schedule.js';
import type { AgentControl } from '../ports/agent-control.js';

/** Removes this node's scheduled restart (`DELETE /restart`). Throws ScheduleError `not_scheduled` when there is none. */
export function cancelScheduledRestart(deps: { readonly agent: AgentControl }): { readonly message: string } {
  cancelRestart(restartScheduleFrom(deps.agent.scheduledRestart()));
  deps.agent.setScheduledRestart(null);
  return { message: 'scheduled restart deleted' };
}
