const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** True for a valid Prometheus metric name. */
export function isValidMetricName(name: string): boolean {
  return METRIC_NAME.test(name);
}

/** True for a valid, non-reserved Prometheus label name (`__` prefixes belong to Prometheus). */
export function isValidLabelName(name: string): boolean {
  return LABEL_NAME.test(name) && !name.startsWith('__');
}

/** Escapes a label value for the text exposition format. */
export function escapeLabelValue(v: string): string {
  return /[\\"\n]/.test(v) ? v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : v;
}

/** Escapes a HELP text for the text exposition format. */
export function escapeHelp(v: string): string {
  return /[\\\n]/.test(v) ? v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n') : v;
}

/** Formats a sample value: integers and floats as JavaScript prints them, specials as Prometheus spells them. */
export function formatValue(v: number): string {
  if (Number.isFinite(v)) return String(v);
  if (Number.isNaN(v)) return 'NaN';
  return v > 0 ? '+Inf' : '-Inf';
}

/** Renders `a="x",b="y"` from pairs (no braces); empty string for no pairs. */
export function renderLabelPairs(pairs: readonly (readonly [string, string])[]): string {
  let out = '';
  for (const [k, v] of pairs) out += `${out ? ',' : ''}${k}="${escapeLabelValue(v)}"`;
  return out;
}

/** Parses `a=b,c=d` into label pairs; a string result names what is wrong. */
/** Labels the exporter puts on series itself: a constant label of the same name would repeat it. */
export const EXPORTER_LABELS: ReadonlySet<string> = new Set(['collector', 'datname', 'le', 'quantile']);

export function parseConstLabels(text: string): (readonly [string, string])[] | string {
  const pairs: (readonly [string, string])[] = [];
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) return `expected name=value, got ${JSON.stringify(part)}`;
    const name = part.slice(0, eq).trim();
    if (!isValidLabelName(name)) return `invalid label name ${JSON.stringify(name)}`;
    if (pairs.some(([k]) => k === name)) return `label ${name} given twice`;
    if (EXPORTER_LABELS.has(name)) return `label ${name} is one the exporter sets itself (${[...EXPORTER_LABELS].join(', ')}): a series would carry it twice`;
    pairs.push([name, part.slice(eq + 1).trim()]);
  }
  return pairs;
}
