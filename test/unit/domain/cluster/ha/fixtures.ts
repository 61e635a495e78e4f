import { EMPTY_CLUSTER, type Cluster, type FailoverKey, type Member } from '../../../../../src/domain/cluster/model/cluster.js';
import { resolveConfig, type RawConfig } from '../../../../../src/domain/cluster/config/config.js';
import { EMPTY_MEMORY, NO_COMMANDS, type TickInput } from '../../../../../src/domain/cluster/ha/decision.js';
import { stoppedFacts, type LocalFacts, type ReplicationRow, type SlotFact } from '../../../../../src/domain/cluster/model/facts.js';
import type { NodeSettings } from '../../../../../src/domain/cluster/model/node.js';
import type { NodeStatus } from '../../../../../src/domain/cluster/model/status.js';

/** Fixed "now" of the decide() tests. */
export const NOW = Date.UTC(2024, 0, 1, 12);

/** A member key as a peer publishes it. */
export function member(name: string, extra: Partial<Member> = {}): Member {
  return {
    name,
    revision: '1',
    connUrl: `postgres://${name}:5432/postgres`,
    apiUrl: `http://${name}:8008`,
    state: 'running',
    role: 'replica',
    version: '0.1.0',
    xlogLocation: 1000,
    receiveLsn: 1000,
    replayLsn: 1000,
    replicationState: 'streaming',
    timeline: 1,
    tags: {},
    pendingRestart: false,
    pendingRestartReason: null,
    scheduledRestart: null,
    ...extra,
  };
}

/** A physical replication slot as the probe reports it. */
export function slot(name: string, extra: Partial<SlotFact> = {}): SlotFact {
  return { name, type: 'physical', database: null, plugin: null, active: false, restartLsn: 4000, confirmedFlushLsn: null, hasXmin: false, ...extra };
}

/** Facts of a running primary at `wal`. */
export function primaryFacts(wal = 5000, extra: Partial<LocalFacts> = {}): LocalFacts {
  return {
    ...stoppedFacts('running', true),
    running: true,
    inRecovery: false,
    systemIdentifier: '7300',
    serverVersion: 150018,
    postmasterStartTime: '2024-01-01T00:00:00+00:00',
    timeline: 1,
    walLocation: wal,
    ...extra,
  };
}

/** Facts of a running replica at `wal`, streaming from `upstream`. */
export function replicaFacts(wal = 5000, upstream: string | null = 'node1', extra: Partial<LocalFacts> = {}): LocalFacts {
  return {
    ...stoppedFacts('running', true),
    running: true,
    inRecovery: true,
    systemIdentifier: '7300',
    serverVersion: 150018,
    postmasterStartTime: '2024-01-01T00:00:00+00:00',
    timeline: 1,
    receivedLocation: wal,
    replayedLocation: wal,
    replicationState: upstream ? 'streaming' : null,
    upstreamConnUrl: upstream ? `postgres://${upstream}:5432/postgres` : null,
    // What node2 keeps by default (member_slots_ttl on): a slot for each other member, for after a failover.
    slots: [slot('node1'), slot('node3')],
    ...extra,
  };
}

/** A streaming standby row as the primary sees it. */
export function row(name: string, flush: number, syncState = 'async'): ReplicationRow {
  return { usename: 'replicator', application_name: name, client_addr: '127.0.0.1', state: 'streaming', sync_state: syncState, sync_priority: 0, write_lsn: flush, flush_lsn: flush, replay_lsn: flush };
}

/** A peer's /node document. */
export function peerStatus(role: 'primary' | 'replica', wal: number, extra: Partial<NodeStatus> = {}): NodeStatus {
  const xlog = role === 'primary' ? { location: wal } : { received_location: wal, replayed_location: wal, replayed_timestamp: null, paused: false };
  return { state: 'running', role, xlog, timeline: 1, svc: { version: '0.1.0', scope: 'demo', name: 'x' }, ...extra } as NodeStatus;
}

/** The failover key. */
export function failover(leader: string | null, memberName: string | null, scheduledAt: string | null = null): FailoverKey {
  return { leader, member: memberName, scheduledAt, revision: '77' };
}

/** Settings of the node under test (`node2` unless given). */
export function settings(extra: Partial<NodeSettings> = {}): NodeSettings {
  return {
    scope: 'demo',
    name: 'node2',
    apiUrl: 'http://node2:8008',
    connUrl: 'postgres://node2:5432/postgres',
    tags: {},
    watchdogMode: 'off',
    svcVersion: '0.1.0',
    ...extra,
  };
}

/** A healthy 3-node cluster led by `leader` (null: unlocked). */
export function cluster(leader: string | null = 'node1', extra: Partial<Cluster> = {}): Cluster {
  return {
    ...EMPTY_CLUSTER,
    initialize: '7300',
    config: { value: {}, revision: '2' },
    leader: leader ? { name: leader, revision: '9' } : null,
    members: ['node1', 'node2', 'node3'].map((n) => member(n, n === leader ? { role: 'primary', receiveLsn: null, replayLsn: null, replicationState: null } : {})),
    status: { optime: 5000, slots: {}, revision: '5' },
    ...extra,
  };
}

/** A TickInput with sensible defaults: node2, a replica of node1, in a healthy cluster. */
export function input(over: Partial<TickInput> & { readonly raw?: RawConfig } = {}): TickInput {
  const { raw, ...rest } = over;
  return {
    now: NOW,
    node: settings(),
    local: { bootstrapDcs: { ttl: 30 }, parameters: {}, watchdogSafetyMargin: 5 },
    config: resolveConfig(raw ?? {}),
    cluster: cluster(),
    dcsReachable: true,
    facts: replicaFacts(),
    lockDeadline: null,
    peers: null,
    failsafeConfirmed: null,
    watchdog: { active: false, usable: true },
    job: null,
    commands: NO_COMMANDS,
    memory: { ...EMPTY_MEMORY, appliedParameters: '{}' },
    ...rest,
  };
}

/** Input of node1 as the leader with a valid lock. */
export function leaderInput(over: Partial<TickInput> & { readonly raw?: RawConfig } = {}): TickInput {
  return input({
    node: settings({ name: 'node1', apiUrl: 'http://node1:8008', connUrl: 'postgres://node1:5432/postgres' }),
    facts: primaryFacts(5000, { replication: [row('node2', 5000), row('node3', 5000)], slots: [slot('node2', { active: true }), slot('node3', { active: true })] }),
    lockDeadline: NOW + 20_000,
    memory: { ...EMPTY_MEMORY, appliedParameters: '{}', lastRole: 'primary' },
    ...over,
  });
}

/** The action types of a decision, in order. */
export function types(d: { readonly actions: readonly { readonly type: string }[] }): string[] {
  return d.actions.map((a) => a.type);
}
