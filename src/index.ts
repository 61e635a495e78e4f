/**
 * `warden`: the HA core as a library. Pure functions and types only: importing it starts
 * nothing and loads no driver (no PostgreSQL client, no etcd client, no HTTP server).
 *
 * - `decide()`: one tick's decision from the cluster view, the local facts and the agent's memory;
 * - the model: cluster view, members, node status document, states, LSNs, sizes, history;
 * - the rules: health predicates of the REST API's checks, candidate eligibility,
 *   switchover/failover request checks, schedules, restart conditions, topology tags and
 *   the upstream a replica streams from;
 * - the dynamic configuration: defaults, merge-patch, validation;
 * - the ports the core is driven through (interfaces and their injection tokens).
 *
 * Fakes to test policies with are in `warden/testing`, the production adapters in `warden/adapters`.
 */

// Decisions
export { decide } from './domain/cluster/ha/decide.js';
export * from './domain/cluster/ha/decision.js';

// Model
export * from './domain/cluster/model/cluster.js';
export * from './domain/cluster/model/cluster-document.js';
export * from './domain/cluster/model/facts.js';
export * from './domain/cluster/model/history.js';
export * from './domain/cluster/model/lsn.js';
export * from './domain/cluster/model/node.js';
export * from './domain/cluster/model/size.js';
export * from './domain/cluster/model/snapshot.js';
export * from './domain/cluster/model/states.js';
export * from './domain/cluster/model/status.js';
export * from './domain/cluster/model/topology-tags.js';

// Rules
export * from './domain/cluster/rules/health.js';
export * from './domain/cluster/rules/eligibility.js';
export * from './domain/cluster/rules/schedule.js';
export * from './domain/cluster/rules/restart-conditions.js';
export * from './domain/cluster/rules/position.js';
export * from './domain/cluster/rules/upstream.js';
export {
  ManualFailoverError,
  checkManualRequest,
  candidatesToProbe,
  checkEligibleCandidate,
  manualFailoverOutcome,
  type ManualAction,
  type ManualFailoverErrorCode,
  type ManualFailoverRequest,
  type ManualFailoverPlan,
  type ManualFailoverOutcome,
} from './domain/cluster/rules/manual-failover.js';

// Dynamic configuration
export * from './domain/cluster/config/config.js';
export { DYNAMIC_CONFIG_SCHEMA, DYNAMIC_CONFIG_KEYS, FORBIDDEN_DYNAMIC_PARAMETERS } from './domain/cluster/config/config-schema.js';

// Errors
export * from './domain/errors.js';

// Ports
export * from './ports/agent-control.js';
export * from './ports/agent-metrics.js';
export * from './ports/callbacks.js';
export * from './ports/clock.js';
export * from './ports/cluster-store.js';
export * from './ports/database.js';
export * from './ports/events.js';
export * from './ports/hook-scripts.js';
export * from './ports/fencer.js';
export * from './ports/logger.js';
export * from './ports/peer-api.js';
export * from './ports/sql.js';
export * from './ports/watchdog.js';
