import Table from 'cli-table3';
import { machineLine } from './machine.js';

/** No rule between body lines: tables stay short. */
const COMPACT = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' };

/** A target a figure should reach: `value <op> limit`. */
export interface Goal {
  readonly op: '<=' | '<' | '>=';
  readonly limit: number;
}

/** One line of a result table. */
export interface Row {
  readonly figure: string;
  readonly value: number;
  readonly unit: string;
  readonly goal?: Goal;
  /** Context printed after the verdict (e.g. "ttl 20 / loop_wait 2"). */
  readonly note?: string;
}

/** A figure's goal: at most `limit`. */
export const atMost = (limit: number): Goal => ({ op: '<=', limit });
/** A figure's goal: below `limit`. */
export const below = (limit: number): Goal => ({ op: '<', limit });
/** A figure's goal: at least `limit`. */
export const atLeast = (limit: number): Goal => ({ op: '>=', limit });

/** True when `value` meets `goal`. */
export function meets(value: number, goal: Goal): boolean {
  if (!Number.isFinite(value)) return false;
  return goal.op === '>=' ? value >= goal.limit : goal.op === '<' ? value < goal.limit : value <= goal.limit;
}

/** Formats a number for a table: thousands separators, decimals only where they carry information. */
export function fmt(value: number, unit = ''): string {
  if (!Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : 2;
  const s = value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
  return unit ? `${s} ${unit}` : s;
}

/** PASS, or MISS with how far off the figure is (absolute and relative to the goal). */
export function verdict(row: Row): string {
  if (!row.goal) return '-';
  if (meets(row.value, row.goal)) return 'PASS';
  if (!Number.isFinite(row.value)) return 'MISS (no figure)';
  const off = Math.abs(row.value - row.goal.limit);
  const pct = row.goal.limit === 0 ? '' : `, ${Math.round((off / row.goal.limit) * 100)}%`;
  return `MISS by ${fmt(off, row.unit)}${pct}`;
}

/** Prints the machine line, then a table of figures next to their goals (`machine`: a line of one's own). */
export function printTable(title: string, rows: readonly Row[], machine: string = machineLine()): void {
  const t = new Table({ head: ['figure', 'value', 'goal', 'verdict', 'note'], style: { head: [], border: [] }, chars: COMPACT });
  for (const r of rows) {
    t.push([r.figure, fmt(r.value, r.unit), r.goal ? `${r.goal.op} ${fmt(r.goal.limit, r.unit)}` : '', verdict(r), r.note ?? '']);
  }
  console.log(`\n${title}\n${machine}\n${t.toString()}`);
}

/** Progress line on stderr, so stdout holds only the result table. */
export function progress(line: string): void {
  process.stderr.write(`[${new Date().toISOString().slice(11, 23)}] ${line}\n`);
}

/** Prints a plain table (e.g. one line per run) without goals. */
export function printRuns(title: string, head: readonly string[], rows: readonly (readonly (string | number)[])[]): void {
  const t = new Table({ head: [...head], style: { head: [], border: [] }, chars: COMPACT });
  for (const r of rows) t.push(r.map((c) => (typeof c === 'number' ? fmt(c) : c)));
  console.log(`\n${title}\n${t.toString()}`);
}
