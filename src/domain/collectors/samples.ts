import { WardenError } from '../errors.js';
import { familyBase, familyName, labelName, type CollectorDefinition, type MetricColumn, type NamingMode } from './collector.js';
import { escapeLabelValue, formatValue, renderLabelPairs } from './metric-naming.js';
import { parseNumberArray, parseSampleValue } from './values.js';

/** Rows of one query, every value as PostgreSQL's text output (or null). */
export interface SqlRows {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly (string | null)[])[];
}

/** Prometheus type of a family. */
export type FamilyType = 'gauge' | 'counter' | 'histogram';

/** One metric family with its samples already rendered as exposition lines (the same in both formats). */
export interface RenderedFamily {
  /** Name in the text format (a counter's sample name). */
  readonly name: string;
  /** OpenMetrics family name (without a counter's `_total`). */
  readonly base: string;
  readonly help: string;
  readonly type: FamilyType;
  readonly unit?: string;
  /** Sample lines, each ending with `\n`. */
  readonly lines: string;
  readonly samples: number;
}

/** What one run of a collector produced. */
export interface CollectorOutput {
  readonly families: readonly RenderedFamily[];
  readonly samples: number;
  /** Rows dropped because an earlier row had the same labels. */
  readonly duplicates: number;
}

/** A query result that does not fit the definition (missing column, non-numeric value...). */
export class CollectorDataError extends WardenError {
  constructor(message: string) {
    super('collector_data', message);
  }
}

/** A definition prepared for turning rows into samples (computed once per definition). */
export interface CompiledCollector {
  readonly def: CollectorDefinition;
  readonly labels: readonly MetricColumn[];
  readonly values: readonly { readonly col: MetricColumn; readonly family: string; readonly base: string; readonly help: string; readonly type: FamilyType }[];
  /** Label names the collector sets itself (extra labels of the same name are not added). */
  readonly labelNames: ReadonlySet<string>;
  readonly mode: NamingMode;
}

/** Prepares a definition for rowsToOutput, with metric names made the `mode` way. */
export function compileCollector(def: CollectorDefinition, mode: NamingMode = 'conventions'): CompiledCollector {
  const labels = def.metrics.filter((c) => c.usage === 'LABEL');
  const values = def.metrics
    .filter((c) => c.usage === 'GAUGE' || c.usage === 'COUNTER' || c.usage === 'HISTOGRAM')
    .map((col) => ({
      col,
      family: familyName(def, col, mode),
      base: familyBase(def, col, mode),
      help: col.description ?? (def.desc ? `${def.desc} (${col.column})` : col.column),
      type: col.usage.toLowerCase() as FamilyType,
    }));
  return { def, labels, values, labelNames: new Set(labels.map(labelName)), mode };
}

function columnIndex(result: SqlRows, column: string, key: string): number {
  const i = result.columns.indexOf(column);
  if (i < 0) throw new CollectorDataError(`collector ${key}: column ${column} is not in the query result (got ${result.columns.join(', ') || 'no columns'})`);
  return i;
}

function valueOf(text: string | null, col: MetricColumn, key: string): number | null {
  if (text === null) return col.default ?? null;
  const n = parseSampleValue(text);
  if (n === null) throw new CollectorDataError(`collector ${key}: column ${col.column} has non-numeric value ${JSON.stringify(text.slice(0, 40))}`);
  return col.scale === undefined ? n : n * col.scale;
}

function histogramLines(
  family: string,
  labels: string,
  col: MetricColumn,
  row: readonly (string | null)[],
  idx: { value: number; sum: number; count: number },
  key: string,
): { text: string; samples: number } {
  const raw = row[idx.value] ?? null;
  if (raw === null) return { text: '', samples: 0 };
  const counts = parseNumberArray(raw);
  const bounds = col.bucket ?? [];
  if (!counts || (counts.length !== bounds.length && counts.length !== bounds.length + 1)) {
    throw new CollectorDataError(`collector ${key}: column ${col.column} must hold ${bounds.length} (or ${bounds.length + 1}) cumulative bucket counts, got ${JSON.stringify(raw.slice(0, 60))}`);
  }
  const countText = idx.count >= 0 ? row[idx.count] ?? null : null;
  const count = countText !== null ? parseSampleValue(countText) : counts[counts.length - 1]!;
  // Cumulative counts never go down, and +Inf holds them all: out of order, a parser refuses the whole scrape.
  const ordered = counts.every((c, i) => i === 0 || c >= counts[i - 1]!) && (count === null || count >= counts[bounds.length - 1]!);
  if (!ordered) {
    throw new CollectorDataError(`collector ${key}: column ${col.column} must hold cumulative bucket counts (never decreasing, the count at least the last bucket), got ${JSON.stringify(raw.slice(0, 60))}${countText !== null ? ` and count ${countText}` : ''}`);
  }
  const sep = labels ? `${labels},` : '';
  let text = '';
  bounds.forEach((b, i) => {
    text += `${family}_bucket{${sep}le="${formatValue(b)}"} ${formatValue(counts[i]!)}\n`;
  });
  text += `${family}_bucket{${sep}le="+Inf"} ${formatValue(count ?? NaN)}\n`;
  let samples = bounds.length + 1;
  const sumText = idx.sum >= 0 ? row[idx.sum] ?? null : null;
  if (sumText !== null) {
    const sum = parseSampleValue(sumText);
    text += `${family}_sum${labels ? `{${labels}}` : ''} ${formatValue((sum ?? NaN) * (col.scale ?? 1))}\n`;
    samples++;
  }
  text += `${family}_count${labels ? `{${labels}}` : ''} ${formatValue(count ?? NaN)}\n`;
  return { text, samples: samples + 1 };
}

/**
 * Turns query rows into rendered families. `extraLabels` (e.g. datname, const labels) are added
 * after the row's labels unless the collector sets a label of the same name. Throws
 * CollectorDataError when the result does not fit the definition.
 */
export function rowsToOutput(cc: CompiledCollector, result: SqlRows, extraLabels: readonly (readonly [string, string])[]): CollectorOutput {
  const key = cc.def.key;
  const extra = renderLabelPairs(extraLabels.filter(([k]) => !cc.labelNames.has(k)));
  const labelIdx = cc.labels.map((c) => columnIndex(result, c.column, key));
  const labelNames = cc.labels.map(labelName);
  const valueIdx = cc.values.map((v) => ({
    value: columnIndex(result, v.col.column, key),
    sum: v.type === 'histogram' ? result.columns.indexOf(`${v.col.column}_sum`) : -1,
    count: v.type === 'histogram' ? result.columns.indexOf(`${v.col.column}_count`) : -1,
  }));
  const texts = cc.values.map(() => '');
  const counts = cc.values.map(() => 0);
  const seen = new Set<string>();
  let duplicates = 0;
  for (const row of result.rows) {
    let labels = '';
    for (let i = 0; i < labelIdx.length; i++) {
      labels += `${i ? ',' : ''}${labelNames[i]}="${escapeLabelValue(row[labelIdx[i]!] ?? '')}"`;
    }
    if (extra) labels = labels ? `${labels},${extra}` : extra;
    if (seen.has(labels)) {
      duplicates++;
      continue;
    }
    seen.add(labels);
    for (let v = 0; v < cc.values.length; v++) {
      const spec = cc.values[v]!;
      const idx = valueIdx[v]!;
      if (spec.type === 'histogram') {
        const h = histogramLines(spec.family, labels, spec.col, row, idx, key);
        texts[v] += h.text;
        counts[v]! += h.samples;
        continue;
      }
      const n = valueOf(row[idx.value] ?? null, spec.col, key);
      if (n === null) continue;
      texts[v] += labels ? `${spec.family}{${labels}} ${formatValue(n)}\n` : `${spec.family} ${formatValue(n)}\n`;
      counts[v]!++;
    }
  }
  const families: RenderedFamily[] = [];
  let samples = 0;
  cc.values.forEach((spec, v) => {
    if (counts[v] === 0) return;
    families.push({ name: spec.family, base: spec.base, help: spec.help, type: spec.type, ...(spec.col.unit && cc.mode === 'conventions' ? { unit: spec.col.unit } : {}), lines: texts[v]!, samples: counts[v]! });
    samples += counts[v]!;
  });
  return { families, samples, duplicates };
}
