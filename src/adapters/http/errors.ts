import type { AgentCommandErrorCode } from '../../domain/cluster/ha/decision.js';
import { ManualFailoverError, type ManualFailoverErrorCode } from '../../domain/cluster/rules/manual-failover.js';
import { SCHEDULE_ERROR_STATUS, type ScheduleErrorCode } from '../../domain/cluster/rules/schedule.js';
import { DcsUnavailableError, problemsText, ValidationError, WardenError, type Problem, type ValidationErrorCode } from '../../domain/errors.js';
import type { Logger } from '../../ports/logger.js';
import type { CommandErrorCode } from '../../usecases/command-error.js';
import type { Exchange } from './exchange.js';
import { setJsonBody } from './json-body.js';

/** Codes only the HTTP layer raises. */
export type HttpErrorCode =
  | 'invalid_json'
  | 'invalid_body'
  | 'body_too_large'
  | 'unauthorized'
  | 'forbidden'
  | 'client_certificate_required'
  | 'not_found'
  | 'method_not_allowed'
  | 'internal_error';

/** Every code an error body of the agent API can carry. */
export type AgentApiErrorCode =
  | HttpErrorCode
  | ValidationErrorCode
  | ScheduleErrorCode
  | ManualFailoverErrorCode
  | CommandErrorCode
  | AgentCommandErrorCode
  | 'dcs_unavailable';

/** An error that already knows its HTTP status; `code` is the stable `error` field of the body. */
export class HttpError extends WardenError<HttpErrorCode> {
  constructor(
    readonly status: number,
    code: HttpErrorCode,
    message: string,
    readonly headers?: Readonly<Record<string, string>>,
    details?: unknown,
  ) {
    super(code, message, details);
  }
}

/**
 * The status of every code (400 unless noted; 412 for a cluster that does not allow
 * it, 503 when it cannot be done now, 409 for a conflicting change, 404 for nothing to act
 * on). The compiler checks that no code is left out.
 */
const STATUS_BY_CODE: Readonly<Record<AgentApiErrorCode, number>> = {
  invalid_json: 400,
  invalid_body: 400,
  body_too_large: 413,
  unauthorized: 401,
  forbidden: 403,
  client_certificate_required: 403,
  not_found: 404,
  method_not_allowed: 405,
  internal_error: 500,
  invalid_input: 400,
  invalid_query: 400,
  invalid_config: 400,
  invalid_flags: 400,
  invalid_local_config: 400,
  invalid_collectors: 400,
  invalid_size: 400,
  invalid_duration: 400,
  malformed_dcs_value: 400,
  ...SCHEDULE_ERROR_STATUS,
  missing_candidate: 400,
  missing_leader: 400,
  failover_cannot_be_scheduled: 400,
  schedule_while_paused: 400,
  paused_without_candidate: 400,
  same_leader_and_candidate: 400,
  leader_mismatch: 412,
  candidate_not_member: 412,
  candidate_not_sync_standby: 412,
  no_sync_standby: 412,
  no_candidates: 412,
  no_eligible_candidate: 412,
  no_leader: 503,
  dcs_write_failed: 503,
  config_conflict: 409,
  config_not_stored: 503,
  config_unreadable: 409,
  not_standby_cluster: 409,
  already_standby_cluster: 409,
  switchover_failed: 503,
  failover_failed: 503,
  switchover_status_unknown: 503,
  failover_status_unknown: 503,
  is_leader: 503,
  failsafe_mode_disabled: 503,
  failsafe_rejected: 409,
  failsafe_unknown: 503,
  action_in_progress: 503,
  not_allowed_on_leader: 503,
  restart_conditions_not_met: 503,
  not_possible_now: 503,
  condition_failed: 503,
  watchdog_failed: 503,
  initialize_failed: 503,
  action_failed: 503,
  probe_failed: 503,
  initdb_failed: 503,
  start_failed: 503,
  stop_failed: 503,
  restart_failed: 503,
  reload_failed: 503,
  promote_failed: 503,
  pre_promote_failed: 503,
  post_bootstrap_failed: 503,
  follow_failed: 503,
  rewind_failed: 503,
  rewind_interrupted: 503,
  rewind_source_unreachable: 503,
  create_replica_failed: 503,
  create_replica_source_unreachable: 503,
  data_dir_not_empty: 409,
  remove_data_failed: 503,
  checkpoint_failed: 503,
  configure_failed: 503,
  slots_failed: 503,
  write_failed: 503,
  dcs_unavailable: 503,
};

/** HTTP status of a code. */
export function statusOfCode(code: AgentApiErrorCode): number {
  return STATUS_BY_CODE[code];
}

/** HTTP status for any thrown value: typed errors by their code, anything else 500. */
export function statusOf(err: unknown): number {
  if (err instanceof HttpError) return err.status;
  if (err instanceof WardenError) {
    const mapped = STATUS_BY_CODE[err.code as AgentApiErrorCode] as number | undefined;
    if (mapped !== undefined) return mapped;
    if (err instanceof ValidationError) return 400;
    if (err instanceof DcsUnavailableError) return 503;
  }
  return 500;
}

/** Most problems one error answer lists; a count says how many more there were. */
const MAX_LISTED_PROBLEMS = 50;

/** The JSON error body: `{error, message}`, plus `problems` when validation listed several. */
export function errorBody(err: unknown): { error: string; message: string; problems?: readonly Problem[]; members?: readonly unknown[] } {
  if (err instanceof ValidationError) {
    if (err.problems.length <= MAX_LISTED_PROBLEMS) return { error: err.code, message: err.message, problems: err.problems };
    // A body of thousands of bad keys would otherwise get an answer of megabytes.
    const more: Problem = { path: '', message: `and ${err.problems.length - MAX_LISTED_PROBLEMS} more problems` };
    const listed = [...err.problems.slice(0, MAX_LISTED_PROBLEMS), more];
    return { error: err.code, message: problemsText(listed), problems: listed };
  }
  // A refused switchover or failover lists every member and why it is or is not eligible.
  const members = (err as { details?: { members?: unknown } } | null)?.details?.members;
  if (err instanceof ManualFailoverError && Array.isArray(members)) return { error: err.code, message: err.message, members };
  if (err instanceof WardenError) return { error: err.code, message: err.message };
  return { error: 'internal_error', message: 'internal error' };
}

/** Sets a JSON error response on `ex`. */
export function sendError(ex: Exchange, status: number, error: AgentApiErrorCode, message: string, extra?: Record<string, unknown>): void {
  setJsonBody(ex, { error, message, ...extra }, status);
}

/**
 * Turns what a route threw into its JSON `{error, message}` response, so a handler bug gives
 * a 500 body and never a crash or a dropped connection.
 */
export function answerError(ex: Exchange, err: unknown, logger: Logger): void {
  const status = statusOf(err);
  if (status >= 500 && !(err instanceof WardenError)) {
    logger.error('REST API request failed', { method: ex.method, path: ex.path, err: String((err as Error)?.stack ?? err) });
  }
  if (err instanceof HttpError && err.headers) for (const [name, value] of Object.entries(err.headers)) ex.set(name, value);
  setJsonBody(ex, errorBody(err), status);
}
