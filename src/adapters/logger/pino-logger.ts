import { pino, type DestinationStream, type Level, type Logger as Pino } from 'pino';
import type { LogFields, Logger } from '../../ports/logger.js';
import { TextDestination } from './text-format.js';

/** How log lines are written: one JSON object per line, or one human line (`time LEVEL [component] msg key=value`). */
export type LogFormat = 'json' | 'text';

/** Options of the pino logger. */
export interface PinoLoggerOptions {
  /** Lowest level written (default `info`). */
  readonly level?: Level | 'silent';
  /** Lowest level per component (the `component` field a child logger carries: `dcs`, `database`, `restapi`...). */
  readonly levels?: Readonly<Record<string, Level | 'silent'>>;
  /** Fields on every line (e.g. `{scope, name}`). */
  readonly base?: LogFields;
  /** `json` (default) or `text`. */
  readonly format?: LogFormat;
  /** Append to this file instead of stdout (created with its directory when missing; `reopen()` after rotation). */
  readonly file?: string;
  /** Where lines go (default stdout, or `file`); for tests. */
  readonly destination?: DestinationStream;
}

/** A file destination that can be reopened after logrotate moved the file. */
interface Reopenable {
  reopen(): void;
}

/**
 * Structured logs through pino (fast, the de facto Node standard): JSON lines by default, or
 * human text lines; to stdout (journald under systemd) or to a file. Writes are synchronous,
 * so the last lines before a crash are not lost in a buffer.
 */
export class PinoLogger implements Logger {
  private constructor(
    private readonly pino: Pino,
    private readonly levels: Readonly<Record<string, Level | 'silent'>>,
    private readonly defaultLevel: Level | 'silent',
    private readonly file: Reopenable | null,
  ) {}

  /** A logger with ISO timestamps, in the given format, to stdout or a file. */
  static create(opts: PinoLoggerOptions = {}): PinoLogger {
    const level = opts.level ?? 'info';
    const levels = opts.levels ?? {};
    // The root must let through what the most verbose component wants; lines of the root
    // itself are filtered by `level` in write(), components by their child's own level.
    const options = {
      level: lowest([level, ...Object.values(levels)]),
      base: { ...opts.base },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label: string) => ({ level: label }) },
    };
    let file: (DestinationStream & Reopenable) | null = null;
    let out: DestinationStream;
    if (opts.destination) out = opts.destination;
    else if (opts.file) out = file = pino.destination({ dest: opts.file, sync: true, mkdir: true, append: true });
    else out = pino.destination({ dest: 1, sync: true });
    if (opts.format === 'text') out = new TextDestination(out);
    const root = new PinoLogger(pino(options, out), levels, level, file);
    return root;
  }

  /** Wraps an existing pino instance. */
  static wrap(instance: Pino): PinoLogger {
    return new PinoLogger(instance, {}, instance.level as Level, null);
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

  /** A logger adding `fields`; a `component` field gives it that component's level (else the default one). */
  child(fields: LogFields): Logger {
    try {
      const component = typeof fields['component'] === 'string' ? fields['component'] : null;
      if (component === null) return new PinoLogger(this.pino.child({ ...fields }), this.levels, this.defaultLevel, this.file);
      const level = this.levels[component] ?? this.defaultLevel;
      return new PinoLogger(this.pino.child({ ...fields }, { level }), this.levels, level, this.file);
    } catch {
      return this;
    }
  }

  /** Reopens the log file (after logrotate moved it); nothing when logging to stdout. Never throws. */
  reopen(): void {
    try {
      this.file?.reopen();
    } catch {
      // The old file stays in use; the next reopen may succeed.
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
    if (!enabled(level, this.defaultLevel)) return;
    try {
      if (fields) this.pino[level]({ ...fields }, msg);
      else this.pino[level](msg);
    } catch {
      // Logging must never break the caller (e.g. a field that cannot be serialized).
    }
  }
}

const ORDER: readonly (Level | 'silent')[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** Whether a line of `level` passes a threshold. */
function enabled(level: Level, threshold: Level | 'silent'): boolean {
  return ORDER.indexOf(level) >= ORDER.indexOf(threshold);
}

/** The most verbose of the levels. */
function lowest(levels: readonly (Level | 'silent')[]): Level | 'silent' {
  return levels.reduce((a, b) => (ORDER.indexOf(b) < ORDER.indexOf(a) ? b : a));
}
