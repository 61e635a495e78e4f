import Table from 'cli-table3';
import YAML from 'yaml';
import { CtlError } from './errors.js';
import { OUTPUT_FORMATS, type OutputFormat } from './options.js';

export { OUTPUT_FORMATS, type OutputFormat } from './options.js';

/** Parses a `-f` value. */
export function parseFormat(value: string | undefined): OutputFormat {
  const v = (value ?? 'pretty') as OutputFormat;
  if (!OUTPUT_FORMATS.includes(v)) throw new CtlError('invalid_format', `--format must be one of ${OUTPUT_FORMATS.join(', ')}; got ${value}`);
  return v;
}

/**
 * A cell as the data has it: json and yaml print it as it is (null stays null, a list stays
 * a list, an object stays an object); pretty and tsv print it as text.
 */
export type Cell = string | number | boolean | null | undefined | readonly unknown[] | { readonly [key: string]: unknown };

/** A row: cells by column key (keys no column names are not printed). */
export type Row = Readonly<Record<string, Cell>>;

/** A column: `key` names it in json/yaml/tsv, `header` in the pretty table. */
export interface Column {
  readonly key: string;
  readonly header: string;
  readonly align?: 'left' | 'right';
  /** Only in json/yaml/tsv (e.g. the cluster name, which pretty shows in the title). */
  readonly machineOnly?: boolean;
  /** Shown in pretty only when some row has a value here (json/yaml/tsv always carry the column). */
  readonly optional?: boolean;
  /** The cell's text in the pretty table (default: `cellText`). */
  readonly pretty?: (value: Cell, row: Row) => string;
}

/** A table to render in any output format. */
export interface TableData {
  /** Shown embedded in the top border of the pretty table. */
  readonly title?: string;
  readonly columns: readonly Column[];
  readonly rows: readonly Row[];
  /** Lines printed under the pretty table only. */
  readonly footers?: readonly string[];
}

/** Options of one rendering. */
export interface RenderOptions {
  /** Column separator of tsv (default a tab). */
  readonly delimiter?: string;
  /** Show every optional column in pretty, even when no row has a value there. */
  readonly allColumns?: boolean;
}

const ASCII_CHARS = {
  top: '-',
  'top-mid': '+',
  'top-left': '+',
  'top-right': '+',
  bottom: '-',
  'bottom-mid': '+',
  'bottom-left': '+',
  'bottom-right': '+',
  left: '|',
  'left-mid': '+',
  mid: '-',
  'mid-mid': '+',
  right: '|',
  'right-mid': '+',
  middle: '|',
};

/** A cell as one line of text: blank for null, JSON for lists and objects. */
export function cellText(v: Cell): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** Whether a cell holds something to show (not null, empty text, false, or an empty list/object). */
export function hasValue(v: Cell): boolean {
  if (v === null || v === undefined || v === '' || v === false) return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

/** Renders a table in the given format, without a trailing newline. */
export function renderTable(data: TableData, format: OutputFormat, opts: RenderOptions = {}): string {
  switch (format) {
    case 'pretty':
      return renderPretty(data, !!opts.allColumns);
    case 'json':
      return JSON.stringify(machineRows(data));
    case 'yaml':
      return YAML.stringify(machineRows(data)).trimEnd();
    case 'tsv':
      return renderTsv(data, opts.delimiter ?? '\t');
  }
}

/** Every column of every row, absent cells as null. */
function machineRows(data: TableData): Record<string, unknown>[] {
  return data.rows.map((row) => {
    const out: Record<string, unknown> = {};
    for (const c of data.columns) out[c.key] = row[c.key] ?? null;
    return out;
  });
}

function renderTsv(data: TableData, delimiter: string): string {
  const clean = (v: Cell) => cellText(v).replace(/[\t\r\n]+/g, ' ');
  const lines = [data.columns.map((c) => c.key).join(delimiter)];
  for (const row of data.rows) lines.push(data.columns.map((c) => clean(row[c.key])).join(delimiter));
  return lines.join('\n');
}

function renderPretty(data: TableData, allColumns: boolean): string {
  const cols = data.columns.filter((c) => !c.machineOnly && (!c.optional || allColumns || data.rows.some((r) => hasValue(r[c.key]))));
  const table = new Table({
    head: cols.map((c) => c.header),
    chars: ASCII_CHARS,
    style: { head: [], border: [], compact: true },
    colAligns: cols.map((c) => c.align ?? 'left'),
  });
  for (const row of data.rows) table.push(cols.map((c) => (c.pretty ? c.pretty(row[c.key], row) : cellText(row[c.key])).replace(/\t/g, ' ')));
  const lines = table.toString().split('\n');
  if (data.title && lines.length) lines[0] = withTitle(lines[0]!, data.title);
  return [...lines, ...(data.footers ?? [])].join('\n');
}

/** Writes ` title ` over the top border after its first corner; above it when the table is too narrow. */
function withTitle(border: string, title: string): string {
  const label = ` ${title} `;
  if (border.length < label.length + 3) return `${title}\n${border}`;
  return border[0] + label + border.slice(1 + label.length);
}
