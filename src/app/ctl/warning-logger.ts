import type { LogFields, Logger } from '../../ports/logger.js';

/** A logger for the CLI: warnings and errors become one `warning:` line on stderr, the rest is dropped. */
export class WarningLogger implements Logger {
  constructor(private readonly write: (line: string) => void) {}

  debug(): void {}
  info(): void {}
  warn(msg: string, fields?: LogFields): void {
    this.write(`warning: ${msg}${describeFields(fields)}`);
  }
  error(msg: string, fields?: LogFields): void {
    this.write(`warning: ${msg}${describeFields(fields)}`);
  }
  child(): Logger {
    return this;
  }
}

/** ` (path: ..., problem: ...)` for the fields given. */
function describeFields(fields: LogFields | undefined): string {
  if (!fields) return '';
  const parts = Object.entries(fields).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}
