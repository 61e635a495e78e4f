import { EMPTY_CLUSTER, type Cluster, type SyncState } from '../../../../src/domain/cluster/model/cluster.js';
import { resolveConfig, type DynamicConfig, type RawConfig } from '../../../../src/domain/cluster/config/config.js';
import type { LocalFacts } from '../../../../src/domain/cluster/model/facts.js';
import type { NodeSettings } from '../../../../src/domain/cluster/model/node.js';
import type { NodeSnapshot } from '../../../../src/domain/cluster/model/snapshot.js';
import { buildStatus, type StatusInput } from '../../../../src/domain/cluster/model/status.js';

/** A fixed "now" (2030-01-01T00:00:00Z) so tests never read the clock. */
export const NOW = Date.UTC(2030, 0, 1);

export function config(raw: RawConfig = {}): DynamicConfig {
  return resolveConfig(raw);
}

export function nodeSettings(over: Partial<NodeSettings> = {}): NodeSettings {
  return {
    scope: 'demo',
    name: 'node1',
    apiUrl: 'http://127.0.0.1:8008',
    connUrl: 'postgres://127.0.0.1:5432/postgres',
    tags: {},
    watchdogMode: 'off',
    svcVersion: '0.1.0',
    ...over,
  };
}

export function primaryFacts(over: Partial<LocalFacts> = {}): LocalFacts {
  return {
    state: 'running',
    initialized: true,
    running: true,
    inRecovery: false,
    systemIdentifier: '7300000000000000001',
    serverVersion: 150018,
    postmasterStartTime: '2029-12-31T23:00:00.000+00:00',
    timeline: 2,
    walLocation: 100_000_000,
    receivedLocation: null,
    replayedLocation: null,
    replayedTimestamp: null,
    replayPaused: false,
    replicationState: null,
    replication: [],
    upstreamConnUrl: null,
    pendingRestart: false,
    pendingRestartReason: {},
    synchronousStandbyNames: '',
    slots: [],
    ...over,
  };
}

export function replicaFacts(over: Partial<LocalFacts> = {}): LocalFacts {
  return primaryFacts({
    inRecovery: true,
    walLocation: null,
    receivedLocation: 99_000_000,
    replayedLocation: 98_000_000,
    replayedTimestamp: '2029-12-31T23:59:59.000+00:00',
    replicationState: 'streaming',
    upstreamConnUrl: 'postgres://127.0.0.1:5433/postgres',
    ...over,
  });
}

export function sync(members: string[], leader = 'node0'): SyncState {
  return { leader, syncStandby: members, quorum: 0, revision: '1' };
}

/** A cluster view with a leader (unless `leader` is null), a status key at `optime`, and an optional sync key. */
export function clusterView(opts: { leader?: string | null; optime?: number | null; sync?: SyncState | null } = {}): Cluster {
  const leader = opts.leader === undefined ? 'node0' : opts.leader;
  const optime = opts.optime === undefined ? 100_000_000 : opts.optime;
  return {
    ...EMPTY_CLUSTER,
    initialize: '7300000000000000001',
    leader: leader === null ? null : { name: leader, revision: '5' },
    status: optime === null ? null : { optime, slots: {}, revision: '6' },
    sync: opts.sync ?? null,
  };
}

export function statusInput(over: Partial<StatusInput> = {}): StatusInput {
  return {
    facts: primaryFacts(),
    node: nodeSettings(),
    config: config(),
    cluster: clusterView({ leader: 'node1' }),
    isLeader: true,
    standbyCluster: false,
    dcsLastSeen: NOW / 1000,
    failsafeActive: false,
    watchdogFailed: false,
    scheduledRestart: null,
    ...over,
  };
}

/**
 * A published snapshot. `leader`: this node holds the lock (expires 20 s after NOW).
 * The status document is built from the same inputs, as the HA loop does.
 */
export function snapshot(
  opts: {
    facts?: LocalFacts;
    node?: Partial<NodeSettings>;
    config?: RawConfig;
    cluster?: Cluster | null;
    leader?: boolean;
    standbyCluster?: boolean;
    clusterReadAt?: number | null;
    lastLoopAt?: number;
    /** Why the replica's WAL position is unconfirmed (see unconfirmedPosition). */
    positionUnconfirmed?: string;
    /** Why the data directory waits for an operator's rebuild. */
    reinitializeRequired?: string;
    /** What the node waits for. */
    waitingFor?: string;
  } = {},
): NodeSnapshot {
  const facts = opts.facts ?? replicaFacts();
  const node = nodeSettings(opts.node);
  const cfg = config(opts.config);
  const cluster = opts.cluster === undefined ? clusterView() : opts.cluster;
  const isLeader = opts.leader ?? false;
  const standbyCluster = opts.standbyCluster ?? false;
  const hints = { positionUnconfirmed: opts.positionUnconfirmed ?? null, reinitializeRequired: opts.reinitializeRequired ?? null, waitingFor: opts.waitingFor ?? null };
  const status = buildStatus(statusInput({ facts, node, config: cfg, cluster, isLeader, standbyCluster, ...hints }));
  return {
    status,
    facts,
    node,
    config: cfg,
    cluster,
    clusterReadAt: opts.clusterReadAt === undefined ? NOW - 1000 : opts.clusterReadAt,
    leaderLockExpiresAt: isLeader ? NOW + 20_000 : null,
    lastLoopAt: opts.lastLoopAt ?? NOW - 1000,
    standbyCluster,
  };
}
