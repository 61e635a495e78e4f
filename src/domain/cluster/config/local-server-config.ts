import type { ParameterValue } from './config.js';

/**
 * What a node's local file says of its server's configuration files. The agent re-reads the
 * file on a reload, so these apply then, without a restart of the agent.
 */
export interface LocalServerConfig {
  /** `db.parameters`: win over the dynamic ones. */
  readonly parameters: Readonly<Record<string, ParameterValue>>;
  /** `db.pg_hba`: lines placed before the generated ones in pg_hba.conf (first match wins). */
  readonly hba: readonly string[];
  /** `db.pg_ident`: the whole of pg_ident.conf; null: the data directory's own file is left as it is. */
  readonly ident: readonly string[] | null;
}
