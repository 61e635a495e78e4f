import { WardenError } from '../domain/errors.js';

/** Why an operator command was refused or failed, beyond what the domain rules name. */
export type CommandErrorCode =
  /** The request was written, but the store refused the compare-and-set: someone changed it meanwhile. */
  | 'dcs_write_failed'
  /** PATCH of a configuration that changed since it was read. */
  | 'config_conflict'
  /** PATCH before the cluster's configuration is stored (while the cluster is bootstrapped). */
  | 'config_not_stored'
  /** PATCH of a stored configuration that cannot be read (a hand edit): only a whole replacement (PUT) fixes it. */
  | 'config_unreadable'
  /** A switchover or failover was taken up and then abandoned. */
  | 'switchover_failed'
  | 'failover_failed'
  /** The outcome did not show within the wait. */
  | 'switchover_status_unknown'
  | 'failover_status_unknown'
  /** promote-cluster of a primary cluster, demote-cluster of a standby cluster. */
  | 'not_standby_cluster'
  | 'already_standby_cluster'
  /** Reinitialize asked of the leader, or of a cluster without one. */
  | 'is_leader'
  | 'no_leader'
  /** A failsafe ping while failsafe mode is off, or from a leader this node does not confirm. */
  | 'failsafe_mode_disabled'
  | 'failsafe_rejected'
  /** Nothing to show yet. */
  | 'failsafe_unknown';

/** A refused or failed operator command; `code` decides the HTTP status. */
export class CommandError extends WardenError<CommandErrorCode> {}
