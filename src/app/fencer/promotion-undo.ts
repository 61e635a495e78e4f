import { syncKeyToRestore, type StoppedServer } from '../../domain/cluster/ha/promotion-undo.js';
import type { ClusterStore } from '../../ports/cluster-store.js';
import type { Logger } from '../../ports/logger.js';

/**
 * Run by the fencer after it stopped the server of an agent that died or hung holding the leader
 * key, before that key can move: puts back the sync key the agent replaced just before promoting,
 * when the promotion never happened (see syncKeyToRestore). Without it, a synchronous cluster
 * whose new primary died at that moment waits for that node to come back: the key it left
 * names no standby. Never throws: the key is released either way.
 */
export async function undoUnfinishedPromotion(store: ClusterStore, me: string, stoppedServer: () => Promise<StoppedServer | null>, logger: Logger): Promise<void> {
  try {
    const sync = (await store.read()).sync;
    if (sync?.promoting === undefined || sync.leader !== me) return;
    const server = await stoppedServer();
    const replaced = syncKeyToRestore(sync, me, server);
    if (replaced === null) {
      logger.warn('the sync key stays as this node wrote it before promoting: its server may have promoted (only this node may hold every acknowledged commit)', {
        server_in_recovery: server?.inRecovery ?? null,
        server_timeline: server?.timeline ?? null,
        timeline_before: sync.promoting.timeline,
      });
      return;
    }
    const fields = { leader: replaced.leader, synchronous: replaced.syncStandby, quorum: replaced.quorum };
    if (await store.writeSync(replaced, sync.revision)) logger.warn('the server stopped before it promoted: the sync key is back as it was before the promotion began, failover can pick from the standbys it names', fields);
    else logger.info('the sync key changed meanwhile: left as it is', fields);
  } catch (error) {
    logger.error('could not read or put back the sync key (the cluster may wait for this node to fail over)', { error: error instanceof Error ? error.message : String(error) });
  }
}
