import { escapeHelp, formatValue, renderLabelPairs } from '../../domain/collectors/metric-naming.js';

/** Label pairs of one series, in the order they are written. */
export type LabelPairs = readonly (readonly [string, string])[];

/** Content type of the Prometheus text exposition format 0.0.4. */
export const PROMETHEUS_TEXT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** The `# HELP` and `# TYPE` lines of a family. */
export function familyHead(name: string, help: string, type: 'gauge' | 'counter' | 'histogram' | 'summary'): string {
  return `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n`;
}

/** One sample line. */
export function sampleLine(name: string, labels: LabelPairs, value: number): string {
  return labels.length ? `${name}{${renderLabelPairs(labels)}} ${formatValue(value)}\n` : `${name} ${formatValue(value)}\n`;
}

/** A histogram series with fixed buckets: cumulative bucket counts, sum and count. */
export class HistogramSeries {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(private readonly buckets: readonly number[]) {
    this.counts = buckets.map(() => 0);
  }

  observe(value: number): void {
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) this.counts[i]!++;
    this.sum += value;
    this.count++;
  }

  /** The `_bucket` (with `le` first, as prom-client writes it), `_sum` and `_count` lines. */
  lines(name: string, labels: LabelPairs): string {
    let out = '';
    for (let i = 0; i < this.buckets.length; i++) out += sampleLine(`${name}_bucket`, [['le', formatValue(this.buckets[i]!)], ...labels], this.counts[i]!);
    out += sampleLine(`${name}_bucket`, [['le', '+Inf'], ...labels], this.count);
    return out + sampleLine(`${name}_sum`, labels, this.sum) + sampleLine(`${name}_count`, labels, this.count);
  }
}
