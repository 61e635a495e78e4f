import { MANAGED_PARAMETERS } from '../../domain/cluster/config/server-parameters.js';
import { confLine } from './conf-lines.js';

/**
 * Settings of postgresql.auto.conf (ALTER SYSTEM, or `pg_basebackup -R` of a data directory
 * made elsewhere) that Warden removes: the server reads that file after postgresql.conf, so a
 * value there silently wins over what the agent writes. Left there, an ALTER SYSTEM of
 * synchronous_standby_names turns synchronous replication off while the cluster still names a
 * synchronous standby (a failover to it loses what it never confirmed), and a primary_conninfo
 * makes a replica follow a server other than the leader.
 */
const OWNED_BY_WARDEN: ReadonlySet<string> = new Set([
  ...MANAGED_PARAMETERS,
  'synchronous_standby_names',
  'recovery_target',
  'recovery_target_lsn',
  'recovery_target_name',
  'recovery_target_time',
  'recovery_target_xid',
  'recovery_target_inclusive',
  'recovery_target_action',
  'recovery_target_timeline',
]);

/** `text` of a postgresql.auto.conf without the settings Warden owns, and the names it took out (in file order). */
export function withoutOwnedSettings(text: string): { readonly text: string; readonly removed: readonly string[] } {
  const removed: string[] = [];
  const kept = text.split('\n').filter((line) => {
    const name = confLine(line)?.name;
    if (name === undefined || !OWNED_BY_WARDEN.has(name)) return true;
    removed.push(name);
    return false;
  });
  return { text: removed.length ? kept.join('\n') : text, removed };
}
