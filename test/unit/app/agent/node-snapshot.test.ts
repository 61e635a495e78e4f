import { expect } from 'chai';
import { snapshotMetricValues } from '../../../../src/adapters/metrics/agent-snapshot-metrics.js';
import { nodeSnapshot, type SnapshotInput } from '../../../../src/app/agent/node-snapshot.js';
import { resolveConfig } from '../../../../src/domain/cluster/config/config.js';
import { checkHealth } from '../../../../src/domain/cluster/rules/health.js';
import { cluster, NOW, primaryFacts, replicaFacts, settings } from '../../domain/cluster/ha/fixtures.js';

const standbyConfig = resolveConfig({ standby_cluster: { host: 'dc1', port: 5432 } });

function snap(over: Partial<SnapshotInput>): ReturnType<typeof nodeSnapshot> {
  return nodeSnapshot({
    now: NOW,
    lastLoopAt: NOW,
    facts: replicaFacts(5000, null, { upstreamConnUrl: 'postgres://dc1:5432/postgres', replicationState: 'streaming' }),
    settings: { node: settings({ name: 'node1' }), local: { bootstrapDcs: {}, parameters: {}, watchdogSafetyMargin: 5 } },
    config: standbyConfig,
    cluster: cluster('node1'),
    clusterReadAt: NOW,
    dcsReachable: true,
    lockDeadline: NOW + 20_000,
    jobName: null,
    failsafeAcceptedAt: null,
    failsafeActive: false,
    watchdogUsable: true,
    scheduledRestart: null,
    ...over,
  });
}

const health = (s: ReturnType<typeof nodeSnapshot>, endpoint: Parameters<typeof checkHealth>[0]) => checkHealth(endpoint, s, {}, NOW);

describe('the node snapshot of a standby cluster', () => {
  it('the lock holder running in recovery is the standby leader: /standby-leader and /leader 200, /primary 503, svc_standby_leader 1', () => {
    const s = snap({});
    expect(s.status.role).to.equal('standby_leader');
    expect(s.standbyCluster).to.equal(true);
    expect(health(s, 'standby_leader')).to.equal(200);
    expect(health(s, 'leader')).to.equal(200);
    expect(health(s, 'primary')).to.equal(503);
    expect(health(s, 'replica')).to.equal(503);
    expect(snapshotMetricValues(s)).to.include({ svc_standby_leader: 1, svc_primary: 0, svc_replica: 0 });
  });

  it('without the lock it is a replica; in a primary cluster the lock holder in recovery is no standby leader', () => {
    expect(snap({ lockDeadline: null }).status.role).to.equal('replica');
    const primaryCluster = snap({ config: resolveConfig({}) });
    expect(primaryCluster.status.role).to.equal('replica');
    expect(health(primaryCluster, 'standby_leader')).to.equal(503);
  });

  it('a primary demoting to the standby leader shows demoted while its server is down', () => {
    expect(snap({ facts: { ...primaryFacts(), running: false, inRecovery: null, state: 'stopped' }, jobName: 'demote cluster' }).status.role).to.equal('demoted');
  });
});

describe('the node snapshot while the DCS does not answer', () => {
  it('a member whose last read of the cluster is older than ttl reports the cluster unlocked (svc_cluster_unlocked 1); a leader still renewing its lock does not', () => {
    const ttlMs = resolveConfig({}).ttl * 1000;
    const replica = (readAt: number) => snap({ config: resolveConfig({}), lockDeadline: null, cluster: cluster('node2'), clusterReadAt: readAt });
    expect(replica(NOW - ttlMs).status).not.to.have.property('cluster_unlocked');
    expect(replica(NOW - ttlMs - 1).status).to.include({ cluster_unlocked: true });
    expect(snapshotMetricValues(replica(NOW - ttlMs - 1))).to.include({ svc_cluster_unlocked: 1 });
    const leader = snap({ config: resolveConfig({}), clusterReadAt: NOW - ttlMs - 1 });
    expect(leader.status).not.to.have.property('cluster_unlocked');
  });

  it('a member whose last DCS call failed says so (dcs_unreachable), and why it cannot be promoted now', () => {
    const replica = (dcsReachable: boolean) => snap({ config: resolveConfig({}), lockDeadline: null, cluster: cluster('node2'), dcsReachable });
    expect(replica(true).status).not.to.have.property('dcs_unreachable');
    const cut = replica(false).status;
    expect(cut).to.include({ dcs_unreachable: true });
    expect(cut.not_eligible?.map((r) => r.code)).to.deep.equal(['dcs_unreachable']);
  });
});
