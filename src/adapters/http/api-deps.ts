import type { AgentControl } from '../../ports/agent-control.js';
import type { Clock } from '../../ports/clock.js';
import type { ClusterStore } from '../../ports/cluster-store.js';
import type { Logger } from '../../ports/logger.js';
import type { PeerApi } from '../../ports/peer-api.js';
import type { AgentMetrics } from '../metrics/agent-metrics.js';
import type { AccessSettings } from './auth.js';

/** Default of `AgentApiOptions.pollIntervalMs`. */
export const DEFAULT_POLL_INTERVAL_MS = 100;

/** Tunables of the API; the defaults suit production. */
export interface AgentApiOptions {
  /** How often a waiting switchover/failover re-reads the DCS besides the reads its watch triggers (default 100 ms). */
  readonly pollIntervalMs?: number;
  /** Bound on asking one member for its status while checking candidates (default 2000 ms). */
  readonly peerTimeoutMs?: number;
}

/**
 * Everything the REST API uses. It reaches the agent only through `control` (snapshot,
 * actions) and the cluster only through `store` (`/config`, `/cluster`, the failover key).
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
}
