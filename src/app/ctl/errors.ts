import { WardenError } from '../../domain/errors.js';

/** Why a wardenctl command failed. */
export type CtlErrorCode =
  | 'aborted'
  | 'action_failed'
  | 'already_scheduled'
  | 'already_standby_cluster'
  | 'already_paused'
  | 'api_error'
  | 'api_unreachable'
  | 'bad_answer'
  | 'candidate_is_leader'
  | 'concurrent_change'
  | 'config_invalid'
  | 'config_not_stored'
  | 'config_unreadable'
  | 'dcs_unavailable'
  | 'editor_failed'
  | 'file_unreadable'
  | 'force_needed'
  | 'interrupted'
  | 'invalid_assignment'
  | 'invalid_choice'
  | 'invalid_db_version'
  | 'invalid_duration'
  | 'invalid_format'
  | 'invalid_query'
  | 'invalid_role'
  | 'invalid_schedule'
  | 'invalid_target'
  | 'invalid_watch'
  | 'invalid_yaml'
  | 'is_leader'
  | 'member_not_found'
  | 'no_api_url'
  | 'no_candidate'
  | 'no_stream'
  | 'no_conn_url'
  | 'no_leader'
  | 'no_members'
  | 'no_scope'
  | 'not_found'
  | 'not_leader'
  | 'not_paused'
  | 'not_standby_cluster'
  | 'paused'
  | 'query_failed'
  | 'scope_mismatch'
  | 'start_failed'
  | 'wait_timeout';

/** Failures of the command line itself (an option's value, a required option missing): exit code 2, like commander's own. */
export const USAGE_ERROR_CODES: ReadonlySet<CtlErrorCode> = new Set<CtlErrorCode>([
  'force_needed',
  'invalid_assignment',
  'invalid_choice',
  'invalid_db_version',
  'invalid_duration',
  'invalid_format',
  'invalid_query',
  'invalid_role',
  'invalid_schedule',
  'invalid_target',
  'invalid_watch',
  'no_candidate',
]);

/** A wardenctl failure: `code` is stable, `message` is the one line printed on stderr. */
export class CtlError extends WardenError<CtlErrorCode> {}

/** The user declined a confirmation (or stdin gave no answer). */
export class AbortedError extends CtlError {
  constructor(message = 'Aborted: nothing was changed') {
    super('aborted', message);
  }
}

/** A member's REST API could not be reached (refused, reset, timed out, TLS failure). */
export class RestUnreachableError extends CtlError {
  constructor(
    readonly url: string,
    reason: string,
  ) {
    super('api_unreachable', `${url}: ${reason}`);
  }
}
