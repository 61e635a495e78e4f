import type { AgentControl } from '../ports/agent-control.js';

/** Re-reads the local configuration file on the agent's next loop (`POST /reload`, SIGHUP). */
export function reload(deps: { readonly agent: AgentControl }): { readonly message: string } {
  deps.agent.requestReload();
  return { message: 'reload scheduled' };
}
