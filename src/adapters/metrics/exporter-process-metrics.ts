import { collectDefaultMetrics, Registry } from 'prom-client';

/** Label pairs added to every process metric. */
type LabelPairs = readonly (readonly [string, string])[];

/**
 * prom-client's process and Node.js metrics as text, re-rendered at most every `maxAgeMs`.
 * Rendering them costs about a millisecond (GC and event-loop histograms, /proc reads), far
 * more than the rest of a cached scrape, so scrapes take the last rendering and a stale one
 * triggers a refresh in the background.
 */
export class ExporterProcessMetrics {
  private readonly registry = new Registry();
  private rendered = '';
  private renderedAt = -Infinity;
  private refreshing: Promise<void> | null = null;

  constructor(
    constLabels: LabelPairs,
    private readonly maxAgeMs = 1000,
  ) {
    if (constLabels.length > 0) this.registry.setDefaultLabels(Object.fromEntries(constLabels));
    collectDefaultMetrics({ register: this.registry });
  }

  /** The latest rendering (empty before the first refresh); schedules a refresh when stale. */
  text(): string {
    if (performance.now() - this.renderedAt > this.maxAgeMs) void this.refresh();
    return this.rendered;
  }

  /** Renders now (shared when already rendering). Never rejects. */
  refresh(): Promise<void> {
    this.refreshing ??= this.registry
      .metrics()
      .then((t) => {
        this.rendered = t.endsWith('\n') ? t : `${t}\n`;
        this.renderedAt = performance.now();
      })
      .catch(() => undefined)
      .finally(() => {
        this.refreshing = null;
      });
    return this.refreshing;
  }

  /** Stops collecting (drops the registry's metrics). */
  close(): void {
    this.registry.clear();
  }
}
