import type { Agent } from 'node:http';

/** How long the connections of an agent replaced by a reload (renewed certificates) may finish their requests. */
const REPLACED_AGENT_GRACE_MS = 60_000;

/** Closes an HTTP(S) agent that new requests no longer use, once its requests had time to finish. */
export function closeReplacedAgent(agent: Agent): void {
  setTimeout(() => agent.destroy(), REPLACED_AGENT_GRACE_MS).unref();
}
