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

/**
 * Labels the exporter puts on series itself, with the series that carry them: a constant label
 * of the same name would give those series the label twice, and Prometheus refuses the scrape.
 */
export const EXPORTER_LABELS: ReadonlyMap<string, string> = new Map([
  ['collector', 'the per-collector *_exporter_query_* metrics'],
  ['datname', 'the samples of per-database collectors'],
  ['le', 'histogram buckets'],
  ['quantile', 'summary quantiles'],
  ['version', '*_exporter_build_info and nodejs_version_info'],
  ['branch', '*_exporter_build_info'],
  ['revision', '*_exporter_build_info'],
  ['major', 'nodejs_version_info'],
  ['minor', 'nodejs_version_info'],
  ['patch', 'nodejs_version_info'],
]);

/** Why a constant label cannot be named `name` (invalid, or taken by the exporter's own series), or null. */
export function constLabelNameProblem(name: string): string | null {
  if (!isValidLabelName(name)) return `invalid label name ${JSON.stringify(name)}`;
  const on = EXPORTER_LABELS.get(name);
  return on === undefined ? null : `label ${name} is one the exporter sets itself on ${on}: those series would carry it twice (constant labels cannot be named ${[...EXPORTER_LABELS.keys()].join(', ')})`;
}

/** Parses `a=b,c=d` into label pairs, with every problem found (the pairs hold the valid ones). */
export function parseConstLabels(text: string): { readonly labels: (readonly [string, string])[]; readonly problems: readonly string[] } {
  const labels: (readonly [string, string])[] = [];
  const problems: string[] = [];
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) {
      problems.push(`expected name=value, got ${JSON.stringify(part)}`);
      continue;
    }
    const name = part.slice(0, eq).trim();
    const problem = constLabelNameProblem(name);
    if (problem !== null) problems.push(problem);
    else if (labels.some(([k]) => k === name)) problems.push(`label ${name} given twice`);
    else labels.push([name, part.slice(eq + 1).trim()]);
  }
  return { labels, problems };
}

/** `base` with `over` applied: a label of `over` replaces the one of the same name in `base` (in its place), others are added after. */
export function mergeConstLabels(base: readonly (readonly [string, string])[], over: readonly (readonly [string, string])[]): (readonly [string, string])[] {
  const byName = new Map(over);
  const merged = base.map(([k, v]) => [k, byName.get(k) ?? v] as const);
  for (const pair of over) if (!base.some(([k]) => k === pair[0])) merged.push(pair);
  return merged;
}
