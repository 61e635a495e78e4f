/**
 * Which server parameters a configuration may set, and which values PostgreSQL can read back
 * from postgresql.conf. Checked when a configuration is written (a 4xx, or an agent that will
 * not start), so that nothing reaches the server that leaves it unable to start.
 */

import { booleanOf, isKnownParameter, parameterValueProblem } from './parameter-values.js';

/** Parameters Warden writes from the node's local configuration or its own state. */
const SET_BY_WARDEN: Readonly<Record<string, string>> = {
  listen_addresses: "Warden sets it from the node's local configuration",
  port: "Warden sets it from the node's local configuration",
  cluster_name: "Warden sets it from the node's local configuration",
  primary_conninfo: 'Warden sets it from the current leader and the replication credentials',
  primary_slot_name: "Warden sets it from the member's replication slot",
  data_directory: "the data directory is the local configuration's db.data_dir",
  config_file: 'Warden writes postgresql.conf itself',
  hba_file: "Warden writes pg_hba.conf itself from the local configuration's db.pg_hba",
  ident_file: "Warden keeps the data directory's own pg_ident.conf",
  include: 'Warden includes postgresql.base.conf itself; put settings in parameters',
  include_if_exists: 'Warden includes postgresql.base.conf itself; put settings in parameters',
  include_dir: 'Warden includes postgresql.base.conf itself; put settings in parameters',
};

/** Parameters Warden keeps on (replicas answer queries; pg_rewind needs hint bits logged): only "on" may be named. */
const KEPT_ON = new Set(['hot_standby', 'wal_log_hints']);

/** Lowercase names of every parameter Warden manages itself (a configuration's value is ignored). */
export const MANAGED_PARAMETERS: ReadonlySet<string> = new Set([...Object.keys(SET_BY_WARDEN), ...KEPT_ON]);

/** PostgreSQL's syntax of a parameter name: an identifier, or two joined by a dot (a module's own). */
const NAME = /^[A-Za-z_][A-Za-z0-9_$]*(\.[A-Za-z_][A-Za-z0-9_$]*)?$/;

/** Why `name: value` cannot be a server parameter of a configuration, or null when it can. */
export function parameterProblem(name: string, value: unknown): string | null {
  if (!NAME.test(name)) return `invalid parameter name: expected letters, digits and _ (a module's own as module.name), got ${JSON.stringify(name)}`;
  const lower = name.toLowerCase();
  const on = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? booleanOf(value) : null;
  if (KEPT_ON.has(lower) && on !== true) return `${lower} cannot be turned off: Warden keeps it on, got ${JSON.stringify(value)}`;
  // Own keys only: a parameter named `constructor` or `__proto__` is no setting of Warden's.
  const why = Object.hasOwn(SET_BY_WARDEN, lower) ? SET_BY_WARDEN[lower] : undefined;
  if (why !== undefined) return `${lower} cannot be set in parameters (${why}), got ${JSON.stringify(value)}`;
  // postgresql.conf holds one parameter per line: a line break or a NUL in a value ends or
  // corrupts the file, and the server would not start again.
  if (typeof value === 'string' && /[\r\n\0]/.test(value)) return `expected a value on one line (postgresql.conf cannot hold line breaks or NUL characters), got ${JSON.stringify(value)}`;
  if (!lower.includes('.') && !isKnownParameter(lower)) {
    return `unknown parameter: PostgreSQL 13-18 has no setting ${JSON.stringify(name)} (a typo? a module's own is module.name), and the server would not start with it`;
  }
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return parameterValueProblem(lower, value);
  return null;
}
