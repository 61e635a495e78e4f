import type { AgentControl } from '../ports/agent-control.js';
import type { AgentMetricsSink } from '../ports/agent-metrics.js';
import type { Clock } from '../ports/clock.js';
import type { EventLog } from '../ports/events.js';
import type { ClusterStore } from '../ports/cluster-store.js';
import type { Logger } from '../ports/logger.js';
import type { PeerApi } from '../ports/peer-api.js';

/** Tunables of the commands; the defaults suit production. */
export interface CommandOptions {
  /** How often a waiting switchover/failover re-reads the cluster besides what its watch reports (default 100 ms). */
  readonly pollIntervalMs?: number;
  /** Bound on asking one member for its status while checking candidates (default 2000 ms). */
  readonly peerTimeoutMs?: number;
}

/** Default of `CommandOptions.pollIntervalMs`. */
export const DEFAULT_POLL_INTERVAL_MS = 100;

/** What the operator commands act through. */
export interface CommandDeps {
  readonly store: ClusterStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly peers: PeerApi;
  /** The agent the command runs in; null where there is none (wardenctl). */
  readonly agent: AgentControl | null;
  readonly options?: CommandOptions;
  /** Where the command reports what it did or refused (the agent's event stream); absent in wardenctl. */
  readonly events?: EventLog | null;
  /** Counts refused operations by reason; absent in wardenctl. */
  readonly metrics?: Pick<AgentMetricsSink, 'operationRefused'> | null;
}
