import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterRunner } from '../../scripts/lib/cluster-runner.js';

/** One line of a log, with its time stamp (epoch ms). */
export interface LogLine {
  readonly at: number;
  readonly text: string;
}

/** Where a cluster's members log: the agent's JSON lines and PostgreSQL's own log. */
export interface LogFiles {
  agent(node: string): string;
  postgres(node: string): string;
}

/** The files of a Warden cluster the ClusterRunner started. */
export function wardenLogFiles(runner: ClusterRunner): LogFiles {
  return {
    agent: (node) => join(runner.layout.dir, 'logs', `${node}.log`),
    postgres: (node) => join(runner.layout.dir, node, 'data-log', 'postgresql.log'),
  };
}

/**
 * An agent's JSON log lines (`time` ISO 8601 with ms, `msg`) between `from` and `to` (epoch
 * ms), each as its message; other lines are skipped.
 */
export function agentLog(file: string, from: number, to: number): LogLine[] {
  if (!existsSync(file)) return [];
  const out: LogLine[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const j = JSON.parse(line) as { time?: string; msg?: string };
      const at = j.time ? Date.parse(j.time) : Number.NaN;
      if (at >= from && at <= to) out.push({ at, text: j.msg ?? '' });
    } catch {
      /* a line cut by the copy */
    }
  }
  return out;
}

/** `2026-11-27 09:41:38.285 UTC [11750] LOG:  text`: PostgreSQL's default log_line_prefix `%m [%p] `. */
const PG_LINE = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d\.\d{3}) (\S+) \[\d+\] (\w+):\s+(.*)$/;

/** PostgreSQL's log lines in `file` between `from` and `to` (epoch ms); the log's time zone must be UTC (the agents' default); other lines are skipped. */
export function pgLog(file: string, from: number, to: number): LogLine[] {
  if (!existsSync(file)) return [];
  const out: LogLine[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = PG_LINE.exec(line);
    if (!m || (m[3] !== 'UTC' && m[3] !== 'GMT')) continue;
    const at = Date.parse(`${m[1]}T${m[2]}Z`);
    if (at >= from && at <= to) out.push({ at, text: `${m[4]}: ${m[5]}` });
  }
  return out;
}

/** Time of the first line at or after `after` whose text matches `pattern`. */
export function firstMatch(lines: readonly LogLine[], pattern: RegExp, after = Number.NEGATIVE_INFINITY): number | undefined {
  return lines.find((l) => l.at >= after && pattern.test(l.text))?.at;
}
