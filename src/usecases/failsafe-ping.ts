import type { AgentControl, FailsafePing } from '../ports/agent-control.js';
import { CommandError } from './command-error.js';

/**
 * A leader's failsafe ping (`POST /failsafe`): while the DCS is out of reach in failsafe
 * mode, a primary keeps running only while every member confirms it. Throws CommandError
 * `failsafe_mode_disabled` or `failsafe_rejected` (this node does not confirm that leader).
 */
export function acceptFailsafePing(deps: { readonly agent: AgentControl }, ping: FailsafePing): { readonly message: string } {
  if (!deps.agent.snapshot().config.failsafe_mode) throw new CommandError('failsafe_mode_disabled', 'failsafe mode is not enabled in the dynamic configuration');
  if (!deps.agent.acceptFailsafe(ping)) throw new CommandError('failsafe_rejected', `failsafe ping from ${ping.name} rejected: this node does not agree it is the leader`);
  return { message: 'Accepted' };
}

/** The members the last view named for failsafe mode (`GET /failsafe`). Throws CommandError `failsafe_unknown` when none are known. */
export function failsafeMembers(deps: { readonly agent: AgentControl }): Readonly<Record<string, string>> {
  const members = deps.agent.snapshot().cluster?.failsafe ?? null;
  if (members === null) throw new CommandError('failsafe_unknown', 'no failsafe members are known (failsafe mode off, or no DCS view yet)');
  return members;
}
