import { MANAGED_PARAMETERS } from '../../domain/cluster/config/server-parameters.js';
import { confLine } from './conf-lines.js';

/**
 * The settings that name where a targeted recovery stops (pgBackRest `--type=time|name|lsn|xid`
 * and Barman `--target-*` write them into postgresql.auto.conf). recovery_target_action is not
 * one of them: a custom bootstrap's recovery always promotes (see PgConfigFiles.write).
 */
export const RECOVERY_TARGET_SETTINGS: ReadonlySet<string> = new Set([
  'recovery_target',
  'recovery_target_lsn',
  'recovery_target_name',
  'recovery_target_time',
  'recovery_target_xid',
  'recovery_target_inclusive',
  'recovery_target_timeline',
]);

/**
 * Settings of postgresql.auto.conf (ALTER SYSTEM, or `pg_basebackup -R` of a data directory
 * made elsewhere) that Warden removes: the server reads that file after postgresql.conf, so a
 * value there silently wins over what the agent writes. Left there, an ALTER SYSTEM of
 * synchronous_standby_names turns synchronous replication off while the cluster still names a
 * synchronous standby (a failover to it loses what it never confirmed), and a primary_conninfo
 * makes a replica follow a server other than the leader; a recovery target would stop a
 * replica's replay (targets apply in standby mode too) or the next recovery of a primary.
 */
const OWNED_BY_WARDEN: ReadonlySet<string> = new Set([...MANAGED_PARAMETERS, 'synchronous_standby_names', 'recovery_target_action', ...RECOVERY_TARGET_SETTINGS]);

/** `text` without the settings named in `names`, and the names it took out (in file order). */
function withoutSettings(text: string, names: (name: string) => boolean): { readonly text: string; readonly removed: readonly string[] } {
  const removed: string[] = [];
  const kept = text.split('\n').filter((line) => {
    const name = confLine(line)?.name;
    if (name === undefined || !names(name)) return true;
    removed.push(name);
    return false;
  });
  return { text: removed.length ? kept.join('\n') : text, removed };
}

/**
 * `text` of a postgresql.auto.conf without the settings Warden owns, and the names it took out
 * (in file order). `keep` names owned settings that stay all the same (a custom bootstrap's
 * recovery target while that recovery runs).
 */
export function withoutOwnedSettings(text: string, keep: ReadonlySet<string> = new Set()): { readonly text: string; readonly removed: readonly string[] } {
  return withoutSettings(text, (name) => OWNED_BY_WARDEN.has(name) && !keep.has(name));
}

/** `text` of a postgresql.auto.conf without its recovery target settings (RECOVERY_TARGET_SETTINGS), and the names it took out. */
export function withoutRecoveryTargets(text: string): { readonly text: string; readonly removed: readonly string[] } {
  return withoutSettings(text, (name) => RECOVERY_TARGET_SETTINGS.has(name));
}
