import type { Cluster, Member } from '../../domain/cluster/model/cluster.js';
import { connHostPort } from '../../domain/cluster/model/cluster-document.js';
import { leaderMember, matchesRole, memberOrFail, parseRoleFilter, readCluster } from './cluster-access.js';
import type { CtlContext } from './context.js';
import { CtlError } from './errors.js';

/** Options shared by `dsn` and `query` to pick a member. */
export interface MemberChoice {
  /** leader | primary | standby-leader | replica | any (default: the leader). */
  readonly role?: string;
}

/** A member name and --role are not given together, and the role is one: checked before the DCS is asked (usage errors). */
export function checkMemberChoice(name: string | undefined, role: string | undefined): void {
  if (name && role) throw new CtlError('invalid_choice', 'give a member name or --role, not both');
  if (role !== undefined) parseRoleFilter(role);
}

/** The member to connect to: the named one, else the first with the role, else the leader. */
export function chooseMember(cluster: Cluster, name: string | undefined, role: string | undefined): Member {
  if (name && role) throw new CtlError('invalid_choice', 'give a member name or --role, not both');
  if (name) return memberOrFail(cluster, name);
  if (!role) return leaderMember(cluster);
  const r = parseRoleFilter(role);
  const running = cluster.members.filter((m) => matchesRole(cluster, m, r) && m.state === 'running');
  const any = running[0] ?? cluster.members.find((m) => matchesRole(cluster, m, r));
  if (!any) throw new CtlError('no_members', `no member with role ${role}`);
  return any;
}

/** A libpq key/value DSN (`host=... port=...`) from a member's conn_url. */
export function memberDsn(m: Member): string {
  const { host, port } = connHostPort(m.connUrl);
  if (!host) throw new CtlError('no_conn_url', `member ${m.name} publishes no usable conn_url (${JSON.stringify(m.connUrl)})`);
  return port === undefined ? `host=${host}` : `host=${host} port=${port}`;
}

/** `dsn [member]`: how to connect to a member's database (the leader by default). */
export async function dsn(ctx: CtlContext, name: string | undefined, opts: MemberChoice = {}): Promise<void> {
  checkMemberChoice(name, opts.role);
  ctx.out(memberDsn(chooseMember(await readCluster(ctx), name, opts.role)));
}
