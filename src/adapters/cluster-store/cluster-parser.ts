import { EMPTY_CLUSTER, type Cluster, type Member } from '../../domain/cluster/model/cluster.js';
import { parseCluster, type ParsedCluster } from './codec.js';
import { ClusterKey, type DcsSnapshot } from './keys.js';
import type { Problem } from '../../domain/errors.js';
import type { Logger } from '../../ports/logger.js';

/** The part of a one-key Cluster that `key` fills. */
function pieceOf(key: string, c: Cluster): Partial<Cluster> {
  switch (key) {
    case ClusterKey.initialize:
      return { initialize: c.initialize, initializeRevision: c.initializeRevision };
    case ClusterKey.config:
      return { config: c.config };
    case ClusterKey.leader:
      return { leader: c.leader };
    case ClusterKey.failover:
      return { failover: c.failover, failoverRevision: c.failoverRevision };
    case ClusterKey.sync:
      return { sync: c.sync };
    case ClusterKey.history:
      return { history: c.history };
    case ClusterKey.status:
      return { status: c.status };
    case ClusterKey.failsafe:
      return { failsafe: c.failsafe };
    default:
      return {};
  }
}

/**
 * parseCluster, key by key, reusing what was parsed for every key whose revision did not
 * change (most keys, most ticks): only new revisions are parsed (and reported) again.
 */
export class ClusterParser {
  private cache = new Map<string, { readonly revision: string; readonly piece: ParsedCluster }>();

  constructor(private readonly logger: Logger) {}

  /** The cluster view of one prefix read. */
  parse(snap: DcsSnapshot): ParsedCluster {
    const next = new Map<string, { readonly revision: string; readonly piece: ParsedCluster }>();
    const members: Member[] = [];
    const problems: Problem[] = [];
    let cluster: Cluster = EMPTY_CLUSTER;
    for (const [key, entry] of snap) {
      let cached = this.cache.get(key);
      if (!cached || cached.revision !== entry.revision) {
        cached = { revision: entry.revision, piece: parseCluster(new Map([[key, entry]])) };
        for (const p of cached.piece.problems) this.logger.warn('ignoring a malformed DCS key', { path: p.path, problem: p.message });
      }
      next.set(key, cached);
      const c = cached.piece.cluster;
      problems.push(...cached.piece.problems);
      if (key.startsWith(ClusterKey.membersPrefix)) members.push(...c.members);
      else cluster = { ...cluster, ...pieceOf(key, c) };
    }
    this.cache = next;
    members.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return { cluster: Object.freeze({ ...cluster, members: Object.freeze(members) }), problems };
  }
}
