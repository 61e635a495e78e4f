import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LogFields, Logger } from '../../ports/logger.js';
import { textLine } from './text-format.js';

/** Severity of a line, lowest first. */
const LEVELS = { debug: 20, info: 30, warn: 40, error: 50, silent: 100 } as const;

/** A level name, or silent. */
export type JsonLogLevel = keyof typeof LEVELS;

/** How log lines are written: one JSON object per line, or one human line (`time LEVEL [component] msg key=value`). */
export type LogFormat = 'json' | 'text';

/** Where lines go: a function taking one line (default: standard output). */
export type LineSink = (line: string) => void;

/** Options of `JsonLinesLogger.create`. */
export interface JsonLinesLoggerOptions {
  /** Lowest level written (default `info`). */
  readonly level?: JsonLogLevel;
  /** Lowest level per component (the `component` field a child logger carries: `dcs`, `database`, `restapi`...). */
  readonly levels?: Readonly<Record<string, JsonLogLevel>>;
  /** Fields on every line (e.g. `{scope, name}`). */
  readonly base?: LogFields;
  /** `json` (default) or `text`. */
  readonly format?: LogFormat;
  /** Append to this file instead of standard output (created with its directory when missing; `reopen()` after rotation). */
  readonly file?: string;
  /** Where lines go instead (tests): a stream or a function. */
  readonly destination?: { write(line: string): unknown } | LineSink;
}

/**
 * Standard output, written synchronously (the last lines before a crash are not lost in a
 * buffer); a pipe that is full at that moment gets the line through the stream's own buffer
 * instead of holding the event loop.
 */
function stdoutSink(line: string): void {
  try {
    writeSync(1, line);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EAGAIN') process.stdout.write(line);
    else throw e;
  }
}

/** A log file opened for appending, reopened by name after a rotation. */
class LogFile {
  private fd: number;

  constructor(private readonly path: string) {
    mkdirSync(dirname(path), { recursive: true });
    // 0640: logs name members, addresses and errors; not for every user of the machine.
    this.fd = openSync(path, 'a', 0o640);
  }

  readonly write = (line: string): void => {
    writeSync(this.fd, line);
  };

  reopen(): void {
    const next = openSync(this.path, 'a', 0o640);
    const old = this.fd;
    this.fd = next;
    closeSync(old);
  }
}

/** Errors as `{type, message, stack}`, as pino's serializer writes them. */
function serialize(v: unknown): unknown {
  return v instanceof Error ? { type: v.name, message: v.message, stack: v.stack } : v;
}

/** JSON of a line whose fields may hold cycles: a repeated object becomes "[Circular]". */
function safeJson(line: Record<string, unknown>): string {
  try {
    return JSON.stringify(line);
  } catch {
    const seen = new WeakSet<object>();
    return JSON.stringify(line, (_k, v: unknown) => {
      if (typeof v !== 'object' || v === null) return typeof v === 'bigint' ? String(v) : v;
      if (seen.has(v)) return '[Circular]';
      seen.add(v);
      return v;
    });
  }
}

/** What a logger and its children share. */
interface Shared {
  readonly sink: LineSink;
  readonly format: LogFormat;
  readonly levels: Readonly<Record<string, JsonLogLevel>>;
  readonly file: LogFile | null;
}

/**
 * Structured logs without a logging library: one JSON object per line
 * (`{"level":"info","time":"<ISO>",...bindings,...fields,"msg":...}`, the shape pino writes),
 * or one human text line; to standard output (journald under systemd) or to a file, written
 * synchronously. Levels per component: a child with a `component` field logs at that
 * component's level. One JSON.stringify per line is all a few lines a second need, and the
 * process keeps none of a logging library's code and buffers.
 */
export class JsonLinesLogger implements Logger {
  private readonly min: number;
  private readonly shared: Shared;

  constructor(
    level: JsonLogLevel = 'info',
    private readonly bindings: LogFields = {},
    sink: LineSink = stdoutSink,
    shared?: Shared,
  ) {
    this.min = LEVELS[level];
    this.shared = shared ?? { sink, format: 'json', levels: {}, file: null };
  }

  /** A logger as the local file's `log` section asks: level, levels per component, JSON or text, standard output or a file. */
  static create(opts: JsonLinesLoggerOptions = {}): JsonLinesLogger {
    const file = opts.file !== undefined && opts.destination === undefined ? new LogFile(opts.file) : null;
    const dest = opts.destination;
    const sink: LineSink = dest === undefined ? (file?.write ?? stdoutSink) : typeof dest === 'function' ? dest : (line) => void dest.write(line);
    return new JsonLinesLogger(opts.level ?? 'info', { ...opts.base }, sink, { sink, format: opts.format ?? 'json', levels: opts.levels ?? {}, file });
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

  /** A logger adding `fields`; a `component` field gives it that component's level (else this logger's). */
  child(fields: LogFields): Logger {
    const component = typeof fields['component'] === 'string' ? fields['component'] : null;
    const own = (Object.keys(LEVELS) as JsonLogLevel[]).find((l) => LEVELS[l] === this.min) ?? 'info';
    const level = component !== null ? (this.shared.levels[component] ?? own) : own;
    return new JsonLinesLogger(level, { ...this.bindings, ...fields }, this.shared.sink, this.shared);
  }

  /** Reopens the log file (after logrotate moved it); nothing when logging to standard output. Never throws. */
  reopen(): void {
    try {
      this.shared.file?.reopen();
    } catch {
      // The old file stays in use; the next reopen may succeed.
    }
  }

  /** Lines are written as they come: nothing to flush. */
  flush(): Promise<void> {
    return Promise.resolve();
  }

  private write(level: Exclude<JsonLogLevel, 'silent'>, msg: string, fields?: LogFields): void {
    if (LEVELS[level] < this.min) return;
    try {
      const line: Record<string, unknown> = { level, time: new Date().toISOString(), ...this.bindings };
      if (fields) for (const k in fields) line[k] = serialize(fields[k]);
      line['msg'] = msg;
      const json = safeJson(line);
      this.shared.sink(this.shared.format === 'text' ? textLine(json) : `${json}\n`);
    } catch {
      // Logging must never break the caller.
    }
  }
}
