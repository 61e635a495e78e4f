import { PGBOUNCER_ADMIN_DATABASE, type TargetKind } from '../../domain/collectors/pgbouncer.js';
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

/** The kind of server a URL points at: the database `pgbouncer` is a pgBouncer's admin console. */
export function targetKindOfUrl(url: string | undefined): TargetKind {
  if (!url) return 'postgres';
  try {
    return decodeURIComponent(new URL(url).pathname.slice(1)) === PGBOUNCER_ADMIN_DATABASE ? 'pgbouncer' : 'postgres';
  } catch {
    return 'postgres';
  }
}
