import Table from 'cli-table3';
import YAML from 'yaml';
import { CtlError } from './errors.js';

/** Output formats of the table commands. */
export type OutputFormat = 'pretty' | 'json' | 'yaml' | 'tsv';

/** Valid `-f` values. */
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['pretty', 'json', 'yaml', 'tsv'];

/** Parses a `-f` value. */
export function parseFormat(value: string | undefined): OutputFormat {
  const v = (value ?? 'pretty') as OutputFormat;
  if (!OUTPUT_FORMATS.includes(v)) throw new CtlError('invalid_format', `--format must be one of ${OUTPUT_FORMATS.join(', ')}; got ${value}`);
  return v;
}

/** A cell: blank (pretty, tsv) or omitted (json, yaml) when null/undefined; `true` shows as `*` in pretty. */
export type Cell = string | number | boolean | null | undefined;

/** A column: `key` names it in json/yaml/tsv, `header` in the pretty table. */
export interface Column {
  readonly key: string;
  readonly header: string;
  readonly align?: 'left' | 'right';
  /** Only in json/yaml/tsv (e.g. the cluster name, which pretty shows in the title). */
  readonly machineOnly?: boolean;
}

/** A table to render in any output format. */
export interface TableData {
  /** Shown embedded in the top border of the pretty table. */
  readonly title?: string;
  readonly columns: readonly Column[];
  readonly rows: readonly Readonly<Record<string, Cell>>[];
  /** Lines printed under the pretty table only. */
  readonly footers?: readonly string[];
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

/** Renders a table in the given format, without a trailing newline. */
export function renderTable(data: TableData, format: OutputFormat): string {
  switch (format) {
    case 'pretty':
      return renderPretty(data);
    case 'json':
      return JSON.stringify(machineRows(data));
    case 'yaml':
      return YAML.stringify(machineRows(data)).trimEnd();
    case 'tsv':
      return renderTsv(data);
  }
}

function machineRows(data: TableData): Record<string, Cell>[] {
  return data.rows.map((row) => {
    const out: Record<string, Cell> = {};
    for (const c of data.columns) {
      const v = row[c.key];
      if (v !== null && v !== undefined && v !== '') out[c.key] = v;
    }
    return out;
  });
}

function renderTsv(data: TableData): string {
  const clean = (v: Cell) => (v === null || v === undefined ? '' : String(v).replace(/[\t\r\n]+/g, ' '));
  const lines = [data.columns.map((c) => c.key).join('\t')];
  for (const row of data.rows) lines.push(data.columns.map((c) => clean(row[c.key])).join('\t'));
  return lines.join('\n');
}

function renderPretty(data: TableData): string {
  const cols = data.columns.filter((c) => !c.machineOnly);
  const table = new Table({
    head: cols.map((c) => c.header),
    chars: ASCII_CHARS,
    style: { head: [], border: [], compact: true },
    colAligns: cols.map((c) => c.align ?? 'left'),
  });
  for (const row of data.rows) {
    table.push(cols.map((c) => {
      const v = row[c.key];
      return v === null || v === undefined || v === false ? '' : v === true ? '*' : String(v).replace(/\t/g, ' ');
    }));
  }
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
