import type { LogFields, Logger } from '../../ports/logger.js';

/** Severity of a line, lowest first. */
const LEVELS = { debug: 20, info: 30, warn: 40, error: 50, silent: 100 } as const;

/** A level name, or silent. */
export type JsonLogLevel = keyof typeof LEVELS;

/** Where lines go: a function taking one line (default: process.stdout, synchronous for files and pipes on Linux). */
export type LineSink = (line: string) => void;

function serialize(v: unknown): unknown {
  return v instanceof Error ? { type: v.name, message: v.message, stack: v.stack } : v;
}

/**
 * Structured logs as JSON lines (`{"level":"info","time":"<ISO>","msg":...,...fields}`, the
 * shape the agent's pino logger writes), without a logging library: the exporter keeps its
 * memory near Node's floor, and its few lines a minute need no more than one JSON.stringify.
 */
export class JsonLinesLogger implements Logger {
  private readonly min: number;

  constructor(
    level: JsonLogLevel = 'info',
    private readonly bindings: LogFields = {},
    private readonly sink: LineSink = (line) => void process.stdout.write(line),
  ) {
    this.min = LEVELS[level];
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
    return new JsonLinesLogger((Object.keys(LEVELS) as JsonLogLevel[]).find((l) => LEVELS[l] === this.min) ?? 'info', { ...this.bindings, ...fields }, this.sink);
  }

  /** Lines are written as they come: nothing to flush. */
  flush(): Promise<void> {
    return Promise.resolve();
  }

  private write(level: Exclude<JsonLogLevel, 'silent'>, msg: string, fields?: LogFields): void {
    if (LEVELS[level] < this.min) return;
    try {
      const line: Record<string, unknown> = { level, time: new Date().toISOString(), ...this.bindings, msg };
      if (fields) for (const [k, v] of Object.entries(fields)) line[k] = serialize(v);
      this.sink(`${JSON.stringify(line)}\n`);
    } catch {
      // Logging must never break the caller (e.g. a field that cannot be serialized).
    }
  }
}
