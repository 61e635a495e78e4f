import type { LogFields, Logger } from '../../ports/logger.js';

/** Severity of a log line. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One collected line: child bindings merged into `fields`. */
export interface MemoryLogLine {
  readonly level: LogLevel;
  readonly msg: string;
  readonly fields: LogFields;
}

/** A logger that keeps every line in memory, for tests to assert on. Children share the parent's `lines`. */
export class MemoryLogger implements Logger {
  constructor(
    readonly lines: MemoryLogLine[] = [],
    private readonly bindings: LogFields = {},
  ) {}

  debug(msg: string, fields?: LogFields): void {
    this.push('debug', msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.push('info', msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.push('warn', msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.push('error', msg, fields);
  }

  child(fields: LogFields): Logger {
    return new MemoryLogger(this.lines, { ...this.bindings, ...fields });
  }

  /** Messages, optionally of one level only. */
  messages(level?: LogLevel): string[] {
    return this.lines.filter((l) => !level || l.level === level).map((l) => l.msg);
  }

  /** Lines whose message contains `text`. */
  find(text: string): MemoryLogLine[] {
    return this.lines.filter((l) => l.msg.includes(text));
  }

  /** Forgets every collected line (shared with children). */
  clear(): void {
    this.lines.length = 0;
  }

  private push(level: LogLevel, msg: string, fields?: LogFields): void {
    this.lines.push(Object.freeze({ level, msg, fields: Object.freeze({ ...this.bindings, ...fields }) }));
  }
}
