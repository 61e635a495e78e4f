/** Base of every typed Warden error: `code` is stable and is what callers and the HTTP layer branch on. */
export class WardenError<C extends string = string> extends Error {
  constructor(
    readonly code: C,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** One problem found while validating input: where it is, what was expected, what was found. */
export interface Problem {
  readonly path: string;
  readonly message: string;
}

/** Codes of invalid input, by what was invalid. */
export type ValidationErrorCode =
  | 'invalid_input'
  | 'invalid_body'
  | 'invalid_query'
  | 'invalid_config'
  | 'invalid_flags'
  | 'invalid_local_config'
  | 'invalid_collectors'
  | 'invalid_size'
  | 'invalid_duration'
  | 'malformed_dcs_value'
  | 'paused'
  | 'timezone_required'
  | 'invalid_schedule'
  | 'schedule_in_past';

/** Problems as one line: `path: message; path: message`. */
export function problemsText(problems: readonly Problem[]): string {
  return problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ');
}

/** Input that does not satisfy a schema or a rule; `problems` lists every one found, not just the first. */
export class ValidationError extends WardenError<ValidationErrorCode> {
  constructor(
    readonly problems: readonly Problem[],
    code: ValidationErrorCode = 'invalid_input',
  ) {
    super(code, problemsText(problems), problems);
  }
}

/** The DCS could not be reached or did not answer within its deadline. */
export class DcsUnavailableError extends WardenError<'dcs_unavailable'> {
  constructor(message: string, cause?: unknown) {
    super('dcs_unavailable', message, cause);
  }
}

/** Which database operation failed. */
export type DatabaseErrorCode =
  | 'probe_failed'
  | 'initdb_failed'
  | 'start_failed'
  | 'stop_failed'
  | 'restart_failed'
  | 'reload_failed'
  | 'promote_failed'
  | 'follow_failed'
  | 'rewind_failed'
  /** pg_rewind stopped after it began rewriting the data directory (or an earlier one did): only a rebuild makes it trustworthy again. */
  | 'rewind_interrupted'
  /** pg_rewind could not reach its source: the target is untouched. */
  | 'rewind_source_unreachable'
  | 'create_replica_failed'
  /** Replica creation could not connect to its source (pg_basebackup refused at connect): nothing was copied. */
  | 'create_replica_source_unreachable'
  /** A build (initdb, a custom bootstrap, a copy) refused a data directory holding what the agent did not make: nothing built, nothing to remove. */
  | 'data_dir_not_empty'
  | 'remove_data_failed'
  | 'checkpoint_failed'
  | 'configure_failed'
  | 'slots_failed'
  | 'write_failed';

/** A database operation failed; `code` names which one. */
export class DatabaseError extends WardenError<DatabaseErrorCode> {}
