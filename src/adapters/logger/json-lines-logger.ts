import { mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LogFields, Logger } from '../../ports/logger.js';
import { QueuedLineWriter } from './queued-line-writer.js';
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

/** A line standing for `count` lines the log lost, and why. */
type Notice = (count: number, reason: string) => string;

/** The one queue in front of standard output: whichever logger writes first creates it. */
let stdoutWriter: QueuedLineWriter | null = null;

function stdoutWriterOf(notice: Notice): QueuedLineWriter {
  return (stdoutWriter ??= new QueuedLineWriter(1, { notice }));
}

/** The notice of lost lines of a logger built without options: JSON, no base fields. */
const jsonNotice: Notice = (count, reason) => formatLine('json', 'warn', lostMessage(count, reason), {}, { dropped_lines: count });

function lostMessage(count: number, reason: string): string {
  return `${count} log line${count === 1 ? '' : 's'} lost: ${reason}`;
}

/** A log file opened for appending, reopened by name after a rotation. */
class LogFile {
  readonly writer: QueuedLineWriter;

  constructor(
    private readonly path: string,
    notice: Notice,
  ) {
    mkdirSync(dirname(path), { recursive: true });
    this.writer = new QueuedLineWriter(LogFile.open(path), { notice });
  }

  /** 0640: logs name members, addresses and errors; not for every user of the machine. */
  private static open(path: string): number {
    return openSync(path, 'a', 0o640);
  }

  reopen(): void {
    this.writer.replaceFd(LogFile.open(this.path));
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

/** One line as written: JSON (level, time, bindings, fields, msg last) or its text form, newline included. */
function formatLine(format: LogFormat, level: Exclude<JsonLogLevel, 'silent'>, msg: string, bindings: LogFields, fields?: LogFields): string {
  const line: Record<string, unknown> = { level, time: new Date().toISOString(), ...bindings };
  if (fields) for (const k in fields) line[k] = serialize(fields[k]);
  line['msg'] = msg;
  const json = safeJson(line);
  return format === 'text' ? textLine(json) : `${json}\n`;
}

/** What a logger and its children share. */
interface Shared {
  readonly sink: LineSink;
  readonly format: LogFormat;
  readonly levels: Readonly<Record<string, JsonLogLevel>>;
  readonly file: LogFile | null;
  /** The queue in front of the file or standard output; null for a destination of the caller's. */
  readonly writer: QueuedLineWriter | null;
}

/**
 * Structured logs without a logging library: one JSON object per line
 * (`{"level":"info","time":"<ISO>",...bindings,...fields,"msg":...}`, the shape pino writes),
 * or one human text line; to standard output (journald under systemd) or to a file, through a
 * queue that never holds the event loop (see QueuedLineWriter). Levels per component: a child
 * with a `component` field logs at that component's level. One JSON.stringify per line is all
 * a few lines a second need, and the process keeps none of a logging library's code and buffers.
 */
export class JsonLinesLogger implements Logger {
  private readonly min: number;
  private readonly shared: Shared;

  constructor(
    level: JsonLogLevel = 'info',
    private readonly bindings: LogFields = {},
    sink?: LineSink,
    shared?: Shared,
  ) {
    this.min = LEVELS[level];
    // Without a sink of the caller's, lines go to standard output through its queue.
    const writer = shared || sink ? null : stdoutWriterOf(jsonNotice);
    this.shared = shared ?? { sink: sink ?? writer!.write, format: 'json', levels: {}, file: null, writer };
  }

  /** A logger as the local file's `log` section asks: level, levels per component, JSON or text, standard output or a file. */
  static create(opts: JsonLinesLoggerOptions = {}): JsonLinesLogger {
    const format = opts.format ?? 'json';
    const base = { ...opts.base };
    // The notice of lost lines is a line of this logger: its format, its base fields.
    const notice: Notice = (count, reason) => formatLine(format, 'warn', lostMessage(count, reason), base, { dropped_lines: count });
    const dest = opts.destination;
    const file = opts.file !== undefined && dest === undefined ? new LogFile(opts.file, notice) : null;
    const writer = dest === undefined ? (file?.writer ?? stdoutWriterOf(notice)) : null;
    const sink: LineSink = writer !== null ? writer.write : typeof dest === 'function' ? dest : (line) => void dest!.write(line);
    return new JsonLinesLogger(opts.level ?? 'info', base, sink, { sink, format, levels: opts.levels ?? {}, file, writer });
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

  /** Resolves once the lines logged so far are written, or after `timeoutMs` when the file or reader does not take them. */
  flush(timeoutMs?: number): Promise<void> {
    return this.shared.writer?.drained(timeoutMs) ?? Promise.resolve();
  }

  private write(level: Exclude<JsonLogLevel, 'silent'>, msg: string, fields?: LogFields): void {
    if (LEVELS[level] < this.min) return;
    try {
      this.shared.sink(formatLine(this.shared.format, level, msg, this.bindings, fields));
    } catch {
      // Logging must never break the caller.
    }
  }
}
