/** Structured fields attached to a log line. */
export type LogFields = Readonly<Record<string, unknown>>;

/** Structured logging. Every method returns at once and never throws. */
export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** A logger that adds `fields` to every line. */
  child(fields: LogFields): Logger;
}
/** Inversify token of the Logger port. */
export const Logger = Symbol.for('warden.Logger');
