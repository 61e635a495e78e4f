import type { Cluster, Member } from '../../domain/cluster/model/cluster.js';
import { clusterRoleOf } from '../../domain/cluster/model/cluster-document.js';
import type { CtlContext } from './context.js';
import { AbortedError, CtlError, RestUnreachableError } from './errors.js';
import { ROLE_FILTERS, type RoleFilter } from './options.js';
import { responseMessage, type HttpMethod, type RestRequestOptions, type RestResponse } from './rest-client.js';

/** Reads the cluster (the store warns about malformed values and reads them as absent). */
export function readCluster(ctx: CtlContext): Promise<Cluster> {
  return ctx.store.read();
}

/** The leader's name, or null. */
export function leaderName(cluster: Cluster): string | null {
  return cluster.leader?.name ?? null;
}

/** Role of a member as the cluster document shows it. */
export const clusterRole = clusterRoleOf;

export { ROLE_FILTERS, type RoleFilter } from './options.js';

/** Parses a `--role` value (`standby_leader` and the older name `master` accepted too). */
export function parseRoleFilter(value: string | undefined): RoleFilter {
  if (value === undefined) return 'any';
  // patronictl's spellings: master for primary, standby for replica.
  const v = (value === 'master' ? 'primary' : value === 'standby' ? 'replica' : value.replace('_', '-')) as RoleFilter;
  if (!ROLE_FILTERS.includes(v)) throw new CtlError('invalid_role', `--role must be one of ${ROLE_FILTERS.join(', ')}; got ${value}`);
  return v;
}

/** Whether a member matches a role filter. */
export function matchesRole(cluster: Cluster, m: Member, role: RoleFilter): boolean {
  const r = clusterRole(cluster, m);
  switch (role) {
    case 'any':
      return true;
    case 'leader':
      return r === 'leader' || r === 'standby_leader';
    case 'primary':
      return r === 'leader';
    case 'standby-leader':
      return r === 'standby_leader';
    case 'replica':
      return r !== 'leader' && r !== 'standby_leader';
  }
}

/** The named member, or an error naming the members that exist. */
export function memberOrFail(cluster: Cluster, name: string): Member {
  const m = cluster.members.find((x) => x.name === name);
  if (!m) {
    const known = cluster.members.map((x) => x.name).join(', ') || 'none';
    throw new CtlError('member_not_found', `member ${name} is not in the cluster (members: ${known})`);
  }
  return m;
}

/** Members named (all when none named), filtered by role; an error when nothing is left. */
export function selectMembers(cluster: Cluster, names: readonly string[], role: RoleFilter): Member[] {
  const chosen = names.length ? [...new Set(names)].map((n) => memberOrFail(cluster, n)) : [...cluster.members];
  const out = chosen.filter((m) => matchesRole(cluster, m, role));
  if (!out.length) {
    throw new CtlError('no_members', cluster.members.length ? `no member matches${role !== 'any' ? ` role ${role}` : ''}${names.length ? ` among ${names.join(', ')}` : ''}` : 'the cluster has no members');
  }
  return out;
}

/** The leader member, or an error when the cluster has none. */
export function leaderMember(cluster: Cluster): Member {
  const name = leaderName(cluster);
  const m = name ? cluster.members.find((x) => x.name === name) : undefined;
  if (!m) throw new CtlError('no_leader', 'the cluster has no leader');
  return m;
}

/** Sends one request to a member's API. Throws when the member publishes no api_url or does not answer. */
export function callMember(ctx: CtlContext, m: Member, method: HttpMethod, path: string, body?: unknown, opts?: RestRequestOptions): Promise<RestResponse> {
  if (!m.apiUrl) return Promise.reject(new CtlError('no_api_url', `member ${m.name} publishes no api_url`));
  return ctx.rest.request(m.apiUrl, method, path, body, opts);
}

/**
 * Sends the request to the first member that answers, in the order given: any agent
 * handles cluster-wide actions (they go through the DCS), so one down node must not block them.
 */
export async function callAny(ctx: CtlContext, members: readonly Member[], method: HttpMethod, path: string, body?: unknown, opts?: RestRequestOptions): Promise<{ member: Member; res: RestResponse }> {
  const failures: string[] = [];
  for (const m of members) {
    if (!m.apiUrl) continue;
    try {
      return { member: m, res: await callMember(ctx, m, method, path, body, opts) };
    } catch (e) {
      if (!(e instanceof RestUnreachableError)) throw e;
      failures.push(`${m.name} (${e.message})`);
    }
  }
  throw new CtlError('api_unreachable', failures.length ? `no member's API answered: ${failures.join('; ')}` : 'no member publishes an api_url');
}

/** Members ordered with the preferred ones first (duplicates removed). */
export function preferring(cluster: Cluster, ...first: (string | null | undefined)[]): Member[] {
  const names = first.filter((n): n is string => !!n);
  const head = names.map((n) => cluster.members.find((m) => m.name === n)).filter((m): m is Member => !!m);
  return [...head, ...cluster.members.filter((m) => !names.includes(m.name))];
}

/** A failed API answer as one line: `<action> on <member> failed: HTTP 503: <message>`. */
export function apiError(action: string, member: string, res: RestResponse): CtlError {
  return new CtlError('api_error', `${action} on ${member} failed: HTTP ${res.status}: ${responseMessage(res)}`);
}

/** Whether the status is a success (2xx). */
export function isOk(res: RestResponse): boolean {
  return res.status >= 200 && res.status < 300;
}

/** Asks for confirmation unless forced; throws AbortedError on no. */
export async function confirmOrAbort(ctx: CtlContext, force: boolean | undefined, question: string): Promise<void> {
  if (force) return;
  if (!(await ctx.confirm(question))) throw new AbortedError();
}
