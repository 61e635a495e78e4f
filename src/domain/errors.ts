/** Base of every typed Warden error: `code` is stable and is what callers and the HTTP layer branch on. */
export class WardenError extends Error {
  constructor(
    readonly code: string,
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

/** Input that does not satisfy a schema or a rule; `problems` lists every one found, not just the first. */
export class ValidationError extends WardenError {
  constructor(
    readonly problems: readonly Problem[],
    code = 'invalid_input',
  ) {
    super(code, problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; '), problems);
  }
}

/** The DCS could not be reached or did not answer within its deadline. */
export class DcsUnavailableError extends WardenError {
  constructor(message: string, cause?: unknown) {
    super('dcs_unavailable', message, cause);
  }
}

/** A database operation failed; `code` names which one (start_failed, promote_failed, ...). */
export class DatabaseError extends WardenError {}
