import { ValidationError } from '../domain/errors.js';
import type { AgentControl } from '../ports/agent-control.js';

/**
 * Re-reads the local configuration file on the agent's next loop (`POST /reload`). The file
 * is read once now: an invalid one is refused with its problems (ValidationError
 * `invalid_local_config`) and nothing is scheduled, so the operator hears it, not only the log.
 */
export async function reload(deps: { readonly agent: AgentControl }): Promise<{ readonly message: string }> {
  const problems = await deps.agent.checkLocalConfig();
  if (problems.length) throw new ValidationError(problems, 'invalid_local_config');
  deps.agent.requestReload();
  return { message: 'reload scheduled' };
}
