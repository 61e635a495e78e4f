import type { RestartConditions } from '../domain/cluster/ha/decision.js';
import { restartScheduleFrom, scheduleRestart } from '../domain/cluster/rules/schedule.js';
import type { ActionResult, AgentControl } from '../ports/agent-control.js';
import type { Clock } from '../ports/clock.js';

/** A restart as an operator asks it (`POST /restart`): conditions, and an optional schedule. */
export interface RestartInput extends RestartConditions {
  /** ISO 8601 with a zone: schedule instead of restarting now. */
  readonly schedule?: string;
}

/** What came of it: scheduled, or the outcome of a restart now. */
export type RestartResult = { readonly kind: 'scheduled'; readonly message: string; readonly schedule: string } | ({ readonly kind: 'now' } & ActionResult);

/**
 * Restarts the database on this node now (when the conditions hold, waiting until it
 * accepts connections), or schedules the restart. Scheduling is refused while paused and
 * when one is already scheduled (ScheduleError), and for a bad timestamp (ValidationError).
 */
export async function restart(deps: { readonly agent: AgentControl; readonly clock: Clock }, input: RestartInput): Promise<RestartResult> {
  const { agent, clock } = deps;
  const { schedule, ...conditions } = input;
  if (schedule === undefined) return { kind: 'now', ...(await agent.restartNow(conditions)) };
  const next = scheduleRestart(restartScheduleFrom(agent.scheduledRestart()), { ...conditions, schedule }, { paused: agent.snapshot().config.pause, now: clock.now() });
  agent.setScheduledRestart(next.kind === 'scheduled' ? next.restart : null);
  return { kind: 'scheduled', message: 'Restart scheduled', schedule };
}
