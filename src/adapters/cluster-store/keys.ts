/** One key as stored in the DCS: raw value and the revision used for compare-and-set. */
export interface DcsEntry {
  readonly value: string;
  /** Opaque revision (etcd mod_revision); compared as a string. */
  readonly revision: string;
  /** The lease the key is attached to (etcd's decimal id), when the store says. */
  readonly lease?: string | null;
}

/** Every key under the cluster prefix, by name relative to it (`leader`, `members/node1`, ...). */
export type DcsSnapshot = ReadonlyMap<string, DcsEntry>;

/** Key names under `/<namespace>/<scope>/` */
export const ClusterKey = {
  initialize: 'initialize',
  config: 'config',
  leader: 'leader',
  failover: 'failover',
  sync: 'sync',
  history: 'history',
  status: 'status',
  failsafe: 'failsafe',
  membersPrefix: 'members/',
  member: (name: string) => `members/${name}`,
} as const;

/** The `/<namespace>/<scope>/` prefix, normalised to one leading and one trailing slash. */
export function clusterPrefix(namespace: string, scope: string): string {
  const ns = namespace.replace(/^\/+|\/+$/g, '');
  return `/${ns ? ns + '/' : ''}${scope}/`;
}
