import type { RestartConditions } from '../ha/decision.js';
import type { LocalFacts } from '../model/facts.js';

/**
 * server_version_num of a version string: `15.2` -> 150002, `9.6.24` -> 90624; null when
 * it is not `X.Y` or `X.Y.Z`.
 */
export function versionNumber(text: string): number | null {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?$/.exec(text.trim());
  if (!m) return null;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
  return major >= 10 ? major * 10000 + minor : major * 10000 + minor * 100 + patch;
}

/** A server_version_num as people write it: `150018` -> `15.18`; `90624` -> `9.6.24`. */
export function formatServerVersion(v: number): string {
  if (v >= 100000) return `${Math.floor(v / 10000)}.${v % 10000}`;
  return `${Math.floor(v / 10000)}.${Math.floor(v / 100) % 100}.${v % 100}`;
}

/** What this node leads: a primary cluster, a standby cluster, or nothing (it does not hold the lock). */
export type Leads = 'primary' | 'standby_leader' | null;

/**
 * The role a restart's `role` condition compares with: a server out of recovery is a primary;
 * otherwise the lock decides (a leader whose server is down is still the leader it was).
 */
export function restartRole(facts: LocalFacts, leads: Leads): 'primary' | 'standby_leader' | 'replica' {
  if (facts.running && facts.inRecovery === false) return 'primary';
  return leads ?? 'replica';
}

/**
 * Why a restart must not run under its conditions, or null when it may:
 * `restart_pending` true needs a pending restart, `role` must match, `db_version` must be
 * above the running version.
 */
export function restartConditionProblem(c: RestartConditions, facts: LocalFacts, leads: Leads): string | null {
  if (c.restart_pending === true && !facts.pendingRestart) return 'no restart is pending';
  const role = restartRole(facts, leads);
  if (c.role !== undefined && c.role !== role) return `the node's role is ${role}, not ${c.role}`;
  if (c.db_version !== undefined) {
    const wanted = versionNumber(c.db_version);
    if (wanted === null) return `db_version ${JSON.stringify(c.db_version)} is not X.Y or X.Y.Z`;
    if (facts.serverVersion !== null && facts.serverVersion >= wanted) {
      return `the server version ${formatServerVersion(facts.serverVersion)} is not lower than ${c.db_version}`;
    }
  }
  return null;
}
