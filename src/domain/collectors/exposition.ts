import { escapeHelp } from './metric-naming.js';
import type { FamilyType, RenderedFamily } from './samples.js';

/** The two exposition formats: Prometheus text 0.0.4 and OpenMetrics 1.0. */
export type ExpositionFormat = 'text' | 'openmetrics';

/** What a family header says: text-format name, OpenMetrics family name (a counter's without `_total`), help, type and unit. */
export interface FamilyMeta {
  /** Name in the text format (a counter's sample name). */
  readonly name: string;
  /** Name of the family in OpenMetrics (without a counter's `_total`). */
  readonly base: string;
  readonly help: string;
  readonly type: FamilyType;
  readonly unit?: string;
}

/** OpenMetrics escapes the double quote in HELP as well. */
function escapeOpenMetricsHelp(v: string): string {
  return /[\\\n"]/.test(v) ? v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"') : v;
}

/** The `# HELP` and `# TYPE` lines of a family (and `# UNIT` in OpenMetrics). */
export function familyHeader(m: FamilyMeta, format: ExpositionFormat = 'text'): string {
  if (format === 'text') return `# HELP ${m.name} ${escapeHelp(m.help)}\n# TYPE ${m.name} ${m.type}\n`;
  return `# HELP ${m.base} ${escapeOpenMetricsHelp(m.help)}\n# TYPE ${m.base} ${m.type}\n${m.unit ? `# UNIT ${m.base} ${m.unit}\n` : ''}`;
}

/** Meta of a family the exporter makes itself: a counter's text name is `<base>_total`. */
export function ownFamily(base: string, help: string, type: FamilyType, unit?: string): FamilyMeta {
  return { name: type === 'counter' ? `${base}_total` : base, base, help, type, ...(unit ? { unit } : {}) };
}

/** Renders families, one block each, in order. */
export function renderFamilies(families: readonly RenderedFamily[], format: ExpositionFormat = 'text'): string {
  let out = '';
  for (const f of families) out += familyHeader(f, format) + f.lines;
  return out;
}

/**
 * Renders several outputs of the same collector (one per database) as one block per family:
 * the exposition format wants each family's samples together under a single header.
 */
export function mergeFamilies(outputs: readonly (readonly RenderedFamily[])[], format: ExpositionFormat = 'text'): string {
  if (outputs.length === 1) return renderFamilies(outputs[0]!, format);
  const merged = new Map<string, { meta: RenderedFamily; lines: string }>();
  for (const families of outputs) {
    for (const f of families) {
      const m = merged.get(f.name);
      if (m) m.lines += f.lines;
      else merged.set(f.name, { meta: f, lines: f.lines });
    }
  }
  let out = '';
  for (const m of merged.values()) out += familyHeader(m.meta, format) + m.lines;
  return out;
}

/** The end of an OpenMetrics exposition. */
export const OPENMETRICS_EOF = '# EOF\n';
