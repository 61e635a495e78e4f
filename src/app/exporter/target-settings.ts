import type { TargetKind } from '../../domain/collectors/pgbouncer.js';
import type { LabelPairs } from '../../domain/collectors/self-metrics.js';

/** One server the exporter collects from: the one of --url, or a named target of /probe. */
export interface TargetSettings {
  /** Name in the targets file; empty for the server of --url. */
  readonly name: string;
  /** PostgreSQL URL (credentials included); absent: the PG* environment. */
  readonly url?: string;
  readonly kind: TargetKind;
  readonly autoDiscovery: boolean;
  readonly includeDatabases: readonly string[];
  readonly excludeDatabases: readonly string[];
  /** Labels added to every sample of this target. */
  readonly constLabels: LabelPairs;
}
