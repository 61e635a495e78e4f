import { pino, type DestinationStream, type Level, type Logger as Pino } from 'pino';
import type { LogFields, Logger } from '../../ports/logger.js';

/** Options of the JSON logger. */
export interface PinoLoggerOptions {
  /** Lowest level written (default `info`). */
  readonly level?: Level | 'silent';
  /** Fields on every line (e.g. `{scope, name}`). */
  readonly base?: LogFields;
  /** Where lines go (default stdout). */
  readonly destination?: DestinationStream;
}

/** Structured JSON logs, one object per line, through pino (fast, asynchronous-safe, the de facto Node standard). */
export class PinoLogger implements Logger {
  private constructor(private readonly pino: Pino) {}

  /** A logger writing JSON lines with ISO timestamps. */
  static create(opts: PinoLoggerOptions = {}): PinoLogger {
    const options = {
      level: opts.level ?? 'info',
      base: { ...opts.base },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label: string) => ({ level: label }) },
    };
    // Default: synchronous stdout, so the last lines before a crash are not lost in a buffer.
    return new PinoLogger(opts.destination ? pino(options, opts.destination) : pino(options));
  }

  /** Wraps an existing pino instance. */
  static wrap(instance: Pino): PinoLogger {
    return new PinoLogger(instance);
  }

  debug(msg: string, fields?: LogFields): void {
    this.write('debug', msg, fields);
  }
  info(msg: string, fields?: LogFields): void {
    this.write('info', msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.write('warn', msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.write('error', msg, fields);
  }

  child(fields: LogFields): Logger {
    try {
      return new PinoLogger(this.pino.child({ ...fields }));
    } catch {
      return this;
    }
  }

  /** Writes buffered lines out (call before exiting). Never throws. */
  flush(): Promise<void> {
    return new Promise((resolve) => {
      try {
        this.pino.flush(() => resolve());
      } catch {
        resolve();
      }
    });
  }

  private write(level: Level, msg: string, fields?: LogFields): void {
    try {
      if (fields) this.pino[level]({ ...fields }, msg);
      else this.pino[level](msg);
    } catch {
      // Logging must never break the caller (e.g. a field that cannot be serialized).
    }
  }
}
