/** What the exporter talks to: a PostgreSQL server, or the admin console of a pgBouncer. */
export type TargetKind = 'postgres' | 'pgbouncer';

/** The admin console of a pgBouncer is the database of this name. */
export const PGBOUNCER_ADMIN_DATABASE = 'pgbouncer';

/**
 * pgBouncer's version (`SHOW VERSION`: "PgBouncer 1.18.0") as one number like
 * server_version_num, major * 10000 + minor * 100 + patch (1.18.0: 11800), so that collector
 * version ranges work the same way. Null when the text holds no version.
 */
export function pgbouncerVersionNumber(text: string): number | null {
  const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(text);
  if (!m) return null;
  return Number(m[1]) * 10000 + Number(m[2]) * 100 + Number(m[3] ?? 0);
}
