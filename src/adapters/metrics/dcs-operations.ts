/**
 * The `operation` label values of `svc_dcs_errors_total`: every DCS call the agent makes. The
 * HA loop's are named after the ClusterStore method in snake case (`replaceInitialize` is
 * `replace_initialize`); the calls made outside it are named after what they attempted: the
 * REST API's reads and commands (`api_read`, `request_switchover`, `request_failover`,
 * `cancel_switchover`, `change_config`) and the agent's shutdown (`shutdown_*`). The set is
 * fixed: each value is exposed at 0 from the start, so `rate()` and `increase()` see the
 * first error. A lost compare-and-set (another member holds the lock, the key changed
 * meanwhile) is an answer, not a failed call, and is not counted.
 */
export const DCS_OPERATIONS = [
  'read',
  'publish_member',
  'acquire_leader',
  'renew_leader',
  'release_leader',
  'claim_initialize',
  'replace_initialize',
  'complete_initialize',
  'abandon_initialize',
  'write_config',
  'write_failover',
  'write_sync',
  'clear_sync',
  'write_history',
  'write_status',
  'write_failsafe',
  'api_read',
  'request_switchover',
  'request_failover',
  'cancel_switchover',
  'change_config',
  'shutdown_renew_leader',
  'shutdown_release_leader',
  'shutdown_publish_member',
  'shutdown_leave',
] as const;

/** One `operation` label value of `svc_dcs_errors_total`. */
export type DcsOperation = (typeof DCS_OPERATIONS)[number];
