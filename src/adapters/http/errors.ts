import type { Context, Next } from 'koa';
import { SCHEDULE_ERROR_STATUS } from '../../domain/cluster/rules/schedule.js';
import { DcsUnavailableError, ValidationError, WardenError, type Problem } from '../../domain/errors.js';
import type { Logger } from '../../ports/logger.js';
import { setJsonBody } from './json-body.js';

/** An error that already knows its HTTP status; `code` is the stable `error` field of the body. */
export class HttpError extends WardenError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
    readonly headers?: Readonly<Record<string, string>>,
    details?: unknown,
  ) {
    super(code, message, details);
  }
}

/**
 * Status of typed domain errors whose code alone decides it. Codes not listed fall back on
 * the error's class: validation 400, DCS 503, anything else 500.
 */
const STATUS_BY_CODE: Readonly<Record<string, number>> = {
  // scheduled actions: paused 400, not_scheduled 404, already_scheduled 409, bad timestamps 400/422
  ...SCHEDULE_ERROR_STATUS,
  // manual failover / switchover (spec §7)
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
  // configuration
  config_conflict: 409,
  invalid_config: 400,
  dcs_unavailable: 503,
};

/**
 * HTTP status of a failed AgentControl action (`{ok: false, error}`): the codes above keep
 * their status; any other refusal or failure of the agent is 503 (spec §7).
 */
export function actionFailureStatus(code: string): number {
  const mapped = STATUS_BY_CODE[code];
  return mapped !== undefined && mapped !== 500 ? mapped : 503;
}

/** HTTP status for any thrown value. */
export function statusOf(err: unknown): number {
  if (err instanceof HttpError) return err.status;
  if (err instanceof WardenError) {
    const mapped = STATUS_BY_CODE[err.code];
    if (mapped !== undefined) return mapped;
    if (err instanceof ValidationError) return 400;
    if (err instanceof DcsUnavailableError) return 503;
  }
  return 500;
}

/** The JSON error body of spec §4: `{error, message}`, plus `problems` when validation listed several. */
export function errorBody(err: unknown): { error: string; message: string; problems?: readonly Problem[] } {
  if (err instanceof ValidationError) return { error: err.code, message: err.message, problems: err.problems };
  if (err instanceof WardenError) return { error: err.code, message: err.message };
  return { error: 'internal_error', message: 'internal error' };
}

/** Sends a JSON error response on `ctx`. */
export function sendError(ctx: Context, status: number, error: string, message: string, extra?: Record<string, unknown>): void {
  ctx.status = status;
  setJsonBody(ctx, { error, message, ...extra });
}

/**
 * Outermost middleware: every thrown value becomes a JSON `{error, message}` response, so a
 * handler bug gives a 500 body and never a crash or a dropped connection.
 */
export function errorMiddleware(logger: Logger) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
    } catch (err) {
      const status = statusOf(err);
      if (status >= 500 && !(err instanceof WardenError)) {
        logger.error('REST API request failed', { method: ctx.method, path: ctx.path, err: String((err as Error)?.stack ?? err) });
      }
      if (err instanceof HttpError && err.headers) ctx.set(err.headers);
      ctx.status = status;
      setJsonBody(ctx, errorBody(err));
    }
  };
}
