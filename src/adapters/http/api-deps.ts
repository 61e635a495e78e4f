import type { AgentControl } from '../../ports/agent-control.js';
import type { Clock } from '../../ports/clock.js';
import type { ClusterStore } from '../../ports/cluster-store.js';
import type { EventLog } from '../../ports/events.js';
import type { Logger } from '../../ports/logger.js';
import type { PeerApi } from '../../ports/peer-api.js';
import type { CommandDeps, CommandOptions } from '../../usecases/command-deps.js';
import type { AgentMetrics } from '../metrics/agent-metrics.js';
import type { AccessSettings } from './auth.js';

/** Tunables of the API; the defaults suit production. */
export type AgentApiOptions = CommandOptions;

/**
 * Everything the REST API uses. Reads come from the agent's snapshot; every command goes
 * through a use case, over `control` (the agent) and `store` (the cluster).
 */
export interface AgentApiDeps {
  readonly control: AgentControl;
  readonly store: ClusterStore;
  readonly clock: Clock;
  readonly peers: PeerApi;
  readonly metrics: AgentMetrics;
  readonly logger: Logger;
  /** Access control; a function is asked on every unsafe request, so a reloaded file applies at once (return the same object while unchanged). */
  readonly access: AccessSettings | (() => AccessSettings);
  /** `restapi.http_extra_headers`: added to every response; a function is asked per request. */
  readonly extraHeaders?: Readonly<Record<string, string>> | (() => Readonly<Record<string, string>>);
  readonly options?: AgentApiOptions;
  /** The agent's event stream (`GET /events`); the operator commands report to it. Absent: `/events` answers an empty history. */
  readonly events?: EventLog;
}

/** The use cases' dependencies for a request of this API. */
export function commandDeps(deps: AgentApiDeps): CommandDeps {
  return {
    store: deps.store,
    clock: deps.clock,
    logger: deps.logger,
    peers: deps.peers,
    agent: deps.control,
    ...(deps.options ? { options: deps.options } : {}),
    events: deps.events ?? null,
    metrics: deps.metrics,
  };
}
