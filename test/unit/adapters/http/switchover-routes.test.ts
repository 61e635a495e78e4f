import { expect } from 'chai';
import { ClusterKey } from '../../../../src/adapters/cluster-store/keys.js';
import { DcsUnavailableError } from '../../../../src/domain/errors.js';
import { SystemClock } from '../../../../src/adapters/clock/system-clock.js';
import type { Clock } from '../../../../src/ports/clock.js';
import { clusterView, memberJson, NOW, primaryFacts, replicaFacts, snapshot, startApi, type ApiHarness } from './support.js';

const FUTURE = '2030-01-01T01:00:00+00:00';

/** Status document of a peer replica (its own view), for the TablePeers. */
function peerStatus(name: string, over: Parameters<typeof replicaFacts>[0] = {}, tags: Record<string, string | boolean> = {}) {
  return snapshot({ facts: replicaFacts(over), node: { name, tags } }).status;
}

/** A healthy three-node cluster in the DCS: node0 leads, node1 (this node) and node2 replicate. */
async function healthyCluster(
  opts: { config?: Record<string, unknown>; sync?: string[]; leader?: string | null; clock?: Clock; pollIntervalMs?: number } = {},
): Promise<ApiHarness> {
  const leader = opts.leader === undefined ? 'node0' : opts.leader;
  const prefill: Record<string, string> = {
    [ClusterKey.member('node0')]: memberJson('node0', { role: 'primary', xlog_location: 100_000_000 }),
    [ClusterKey.member('node1')]: memberJson('node1', { receive_lsn: 99_500_000, replay_lsn: 99_000_000 }),
    [ClusterKey.member('node2')]: memberJson('node2', { receive_lsn: 99_900_000, replay_lsn: 99_800_000 }),
    [ClusterKey.status]: JSON.stringify({ optime: 100_000_000, slots: {} }),
  };
  if (leader) prefill[ClusterKey.leader] = leader;
  if (opts.config) prefill[ClusterKey.config] = JSON.stringify(opts.config);
  if (opts.sync) prefill[ClusterKey.sync] = JSON.stringify({ leader, sync_standby: opts.sync, quorum: 0 });
  const api = await startApi({
    prefill,
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.pollIntervalMs !== undefined ? { pollIntervalMs: opts.pollIntervalMs } : {}),
    snapshot: snapshot({ facts: replicaFacts(), config: opts.config ?? {}, cluster: clusterView({ leader, config: opts.config ?? {} }) }),
  });
  api.peers.statuses.set('http://127.0.0.1:8008', snapshot({ facts: primaryFacts(), node: { name: 'node0' }, leader: true }).status);
  api.peers.statuses.set('http://127.0.0.1:8010', peerStatus('node2', { receivedLocation: 99_900_000, replayedLocation: 99_800_000 }));
  return api;
}

/** Simulates the agents acting on the failover key: the candidate takes the leader key and the key is consumed. */
function agentsObey(api: ApiHarness, newLeader: string | null, opts: { clearKey?: boolean } = {}): void {
  api.control.onWake = async () => {
    if (newLeader) await api.dcs.put(ClusterKey.leader, newLeader);
    if (opts.clearKey ?? true) await api.dcs.put(ClusterKey.failover, '{}');
  };
}

async function failoverKey(api: ApiHarness): Promise<unknown> {
  const entry = (await api.dcs.readAll()).get(ClusterKey.failover);
  return entry ? JSON.parse(entry.value) : undefined;
}

describe('REST API: /switchover and /failover (the documented order)', function () {
  let api: ApiHarness;
  afterEach(() => api?.close());

  describe('request checks (steps 1-5): 400 / 422', () => {
    beforeEach(async () => {
      api = await healthyCluster();
    });

    const cases: [string, string, Record<string, unknown>, number, string][] = [
      ['/failover without candidate', '/failover', {}, 400, 'missing_candidate'],
      ['/failover without candidate, with leader', '/failover', { leader: 'node0' }, 400, 'missing_candidate'],
      ['/switchover without leader', '/switchover', { candidate: 'node2' }, 400, 'missing_leader'],
      ['scheduled_at on /failover', '/failover', { candidate: 'node2', scheduled_at: FUTURE }, 400, 'failover_cannot_be_scheduled'],
      ['scheduled_at without a time zone', '/switchover', { leader: 'node0', scheduled_at: '2030-01-01T01:00:00' }, 400, 'timezone_required'],
      ['scheduled_at in the past', '/switchover', { leader: 'node0', scheduled_at: '2029-12-31T23:00:00Z' }, 422, 'schedule_in_past'],
      ['scheduled_at unparseable', '/switchover', { leader: 'node0', scheduled_at: 'tomorrow' }, 422, 'invalid_schedule'],
      ['leader equals candidate', '/switchover', { leader: 'node0', candidate: 'node0' }, 400, 'same_leader_and_candidate'],
      ['an unknown field', '/switchover', { leader: 'node0', member: 'node2' }, 400, 'invalid_body'],
      ['a wrong type', '/switchover', { leader: 'node0', candidate: 7 }, 400, 'invalid_body'],
    ];
    for (const [title, path, body, status, code] of cases) {
      it(`${title}: ${status} ${code}`, async () => {
        const res = await api.request('POST', path, { body });
        expect(res.status).to.equal(status);
        expect(res.json.error).to.equal(code);
        expect(res.json.message).to.be.a('string').and.not.empty;
        expect(await failoverKey(api)).to.equal(undefined);
      });
    }

    it('a bad body names the field', async () => {
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 7, extra: 1 } });
      expect(res.json.message).to.include('candidate').and.include('extra');
    });

    it('the checks run in order: a failover without candidate is reported before its scheduled_at', async () => {
      const res = await api.request('POST', '/failover', { body: { scheduled_at: 'garbage' } });
      expect(res.json.error).to.equal('missing_candidate');
    });

    it('the request checks answer 400 even while the DCS is down; valid requests then get 503', async () => {
      api.store.setReachable(false);
      expect((await api.request('POST', '/switchover', { body: {} })).status).to.equal(400);
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0' } });
      expect(res.status).to.equal(503);
      expect(res.json.error).to.equal('dcs_unavailable');
    });
  });

  describe('pause', () => {
    beforeEach(async () => {
      api = await healthyCluster({ config: { pause: true } });
    });
    it('scheduled_at while paused: 400', async () => {
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2', scheduled_at: FUTURE } });
      expect(res.status).to.equal(400);
      expect(res.json.error).to.equal('schedule_while_paused');
    });
    it('paused without candidate: 400', async () => {
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0' } });
      expect(res.status).to.equal(400);
      expect(res.json.error).to.equal('paused_without_candidate');
    });
    it('paused with a candidate is allowed', async () => {
      agentsObey(api, 'node2');
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2' } });
      expect(res.status).to.equal(200);
    });
  });

  describe('cluster checks (step 6): 412 / 503', () => {
    it('leader is not the current leader: 412', async () => {
      api = await healthyCluster();
      const res = await api.request('POST', '/switchover', { body: { leader: 'node2' } });
      expect(res.status).to.equal(412);
      expect(res.json.error).to.equal('leader_mismatch');
    });

    it('/failover with a leader is handled as a switchover (leader checked)', async () => {
      api = await healthyCluster();
      const res = await api.request('POST', '/failover', { body: { leader: 'node9', candidate: 'node2' } });
      expect(res.status).to.equal(412);
      expect(res.json.error).to.equal('leader_mismatch');
    });

    it('candidate not a member: 412', async () => {
      api = await healthyCluster();
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node7' } });
      expect(res.status).to.equal(412);
      expect(res.json.error).to.equal('candidate_not_member');
    });

    it('synchronous mode: a switchover candidate outside the sync key is 412; a failover skips the check', async () => {
      api = await healthyCluster({ config: { synchronous_mode: true }, sync: ['node1'] });
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2' } });
      expect(res.status).to.equal(412);
      expect(res.json.error).to.equal('candidate_not_sync_standby');
      agentsObey(api, 'node2');
      expect((await api.request('POST', '/failover', { body: { candidate: 'node2' } })).status).to.equal(200);
    });

    it('synchronous mode without any sync standby and no candidate: 412', async () => {
      api = await healthyCluster({ config: { synchronous_mode: true }, sync: [] });
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0' } });
      expect(res.status).to.equal(412);
      expect(res.json.error).to.equal('no_sync_standby');
    });

    it('no eligible candidate: unreachable, nofailover, lag above maximum_lag_on_failover: 412 with the reasons', async () => {
      api = await healthyCluster();
      api.peers.statuses.delete('http://127.0.0.1:8010');
      let res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2' } });
      expect(res.status).to.equal(412);
      expect(res.json.error).to.equal('no_eligible_candidate');
      expect(res.json.message).to.include('did not answer');

      api.peers.statuses.set('http://127.0.0.1:8010', peerStatus('node2', {}, { nofailover: true }));
      await api.dcs.put(ClusterKey.member('node2'), memberJson('node2', { tags: { nofailover: true } }));
      res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2' } });
      expect(res.status).to.equal(412);
      expect(res.json.message).to.include('nofailover');

      await api.dcs.put(ClusterKey.member('node2'), memberJson('node2'));
      api.peers.statuses.set('http://127.0.0.1:8010', peerStatus('node2', { receivedLocation: 1000, replayedLocation: 1000 }));
      res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2' } });
      expect(res.status).to.equal(412);
      expect(res.json.message).to.include('maximum_lag_on_failover');
    });

    it('without a candidate, one eligible member is enough (this node answers from its own snapshot)', async () => {
      api = await healthyCluster();
      api.peers.statuses.delete('http://127.0.0.1:8010');
      agentsObey(api, 'node1');
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0' } });
      expect(res.status).to.equal(200);
      expect(res.json).to.deep.equal({ message: 'Successfully switched over to "node1"', leader: 'node1' });
      expect(api.peers.asked).to.not.include('http://127.0.0.1:8009');
    });

    it('/switchover on a cluster without a leader: 503', async () => {
      api = await healthyCluster({ leader: null });
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2' } });
      expect(res.status).to.equal(503);
      expect(res.json.error).to.equal('no_leader');
    });

    it('/failover without a leader promotes even a lagging candidate (the seed exception)', async () => {
      api = await healthyCluster({ leader: null });
      api.peers.statuses.set('http://127.0.0.1:8010', peerStatus('node2', { receivedLocation: 1000, replayedLocation: 1000 }));
      agentsObey(api, 'node2');
      const res = await api.request('POST', '/failover', { body: { candidate: 'node2' } });
      expect(res.status).to.equal(200);
      expect(res.json).to.deep.equal({ message: 'Successfully failed over to "node2"', leader: 'node2' });
    });

    it('a failed DCS write: 503', async () => {
      api = await healthyCluster();
      api.dcs.put = async () => false;
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2' } });
      expect(res.status).to.equal(503);
      expect(res.json.error).to.equal('dcs_write_failed');
    });
  });

  describe('outcome', () => {
    beforeEach(async () => {
      api = await healthyCluster();
    });

    it('scheduled: 202, the failover key holds {leader, member, scheduled_at}, the loop is woken', async () => {
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2', scheduled_at: FUTURE } });
      expect(res.status).to.equal(202);
      expect(res.json).to.deep.equal({ message: 'Switchover scheduled', scheduled_at: FUTURE });
      expect(await failoverKey(api)).to.deep.equal({ leader: 'node0', member: 'node2', scheduled_at: FUTURE });
      expect(api.control.wakes).to.equal(1);
    });

    it('a scheduled switchover is not checked against the members (scheduled: no 412)', async () => {
      api.peers.statuses.clear();
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2', scheduled_at: FUTURE } });
      expect(res.status).to.equal(202);
    });

    it('immediate: waits for the new leader, 200 "Successfully switched over"', async () => {
      agentsObey(api, 'node2');
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2' } });
      expect(res.status).to.equal(200);
      expect(res.json).to.deep.equal({ message: 'Successfully switched over to "node2"', leader: 'node2' });
    });

    it('another member won the race: 200 "... instead of ..."', async () => {
      agentsObey(api, 'node1');
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2' } });
      expect(res.status).to.equal(200);
      expect(res.json.message).to.equal('Switched over to "node1" instead of "node2"');
    });

    it('the key consumed without a new leader: 503 failed', async () => {
      agentsObey(api, null);
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2' } });
      expect(res.status).to.equal(503);
      expect(res.json).to.deep.equal({ error: 'switchover_failed', message: 'Switchover failed' });
    });

    it('nothing happens: 503 status unknown after 2*max(10, loop_wait) seconds', async () => {
      const start = api.clock.now();
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2' } });
      expect(res.status).to.equal(503);
      expect(res.json.error).to.equal('switchover_status_unknown');
      expect(api.clock.now() - start).to.equal(20_000);
    });

    it('the wait is bounded by loop_wait when it is above 10 s', async () => {
      await api.close();
      api = await healthyCluster({ config: { loop_wait: 15, ttl: 40, retry_timeout: 10 } });
      const start = api.clock.now();
      await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2' } });
      expect(api.clock.now() - start).to.equal(30_000);
    });

    it('the answer follows the new leader key within milliseconds (DCS watch), not at the next poll', async () => {
      await api.close();
      api = await healthyCluster({ clock: new SystemClock(), pollIntervalMs: 10_000 });
      api.control.onWake = () => {
        setTimeout(() => void api.dcs.put(ClusterKey.leader, 'node2'), 100);
      };
      const started = Date.now();
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2' } });
      const took = Date.now() - started;
      expect(res.status).to.equal(200);
      expect(res.json.leader).to.equal('node2');
      expect(took).to.be.within(100, 2_000);
    });

    it('a DCS outage while waiting is ridden out', async () => {
      // The agent's store reads from a watched copy: each poll is a watch confirmation, a full read when that fails.
      let polls = 0;
      let down = false;
      const progress = api.dcs.progress.bind(api.dcs);
      const readAllAt = api.dcs.readAllAt.bind(api.dcs);
      api.dcs.progress = async () => {
        polls++;
        if (polls === 2) {
          down = true;
          return null;
        }
        if (polls === 3) await api.dcs.put(ClusterKey.leader, 'node2');
        return progress();
      };
      api.dcs.readAllAt = async () => {
        if (down) {
          down = false;
          throw new DcsUnavailableError('blip');
        }
        return readAllAt();
      };
      const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2' } });
      expect(res.status, JSON.stringify(api.logger.lines)).to.equal(200);
    });
  });

  describe('DELETE /switchover', () => {
    beforeEach(async () => {
      api = await healthyCluster();
    });
    it('404 when nothing is scheduled', async () => {
      const res = await api.request('DELETE', '/switchover');
      expect(res.status).to.equal(404);
      expect(res.json.error).to.equal('not_scheduled');
    });
    it('200 and the key emptied when a switchover is scheduled', async () => {
      await api.request('POST', '/switchover', { body: { leader: 'node0', scheduled_at: FUTURE } });
      const res = await api.request('DELETE', '/switchover');
      expect(res.status).to.equal(200);
      expect(await failoverKey(api)).to.deep.equal({});
      expect((await api.request('DELETE', '/switchover')).status).to.equal(404);
    });
    it('503 when the DCS is down', async () => {
      api.store.setReachable(false);
      expect((await api.request('DELETE', '/switchover')).status).to.equal(503);
    });
  });

  it('NOW is the fixed test time', () => {
    expect(new Date(NOW).toISOString()).to.equal('2030-01-01T00:00:00.000Z');
  });
});

describe('REST API: reasons, dry runs and events of /switchover and /failover', function () {
  let api: ApiHarness;
  afterEach(() => api?.close());

  it('a refusal (412) lists every member and why it is or is not eligible, counts it, and reports it as an event', async () => {
    api = await healthyCluster({ config: { maximum_lag_on_failover: 100 } });
    const res = await api.request('POST', '/switchover', { body: { leader: 'node0' } });
    expect(res.status).to.equal(412);
    expect(res.json.error).to.equal('no_eligible_candidate');
    const byName = Object.fromEntries((res.json.members as any[]).map((m) => [m.name, m]));
    expect(Object.keys(byName)).to.deep.equal(['node0', 'node1', 'node2']);
    expect(byName.node0.reasons[0].code).to.equal('leader');
    expect(byName.node2).to.deep.include({ eligible: false });
    expect(byName.node2.reasons[0]).to.deep.include({ code: 'lag_exceeded', lag_bytes: 100_000, maximum_lag_on_failover: 100 });
    expect(res.json.message).to.include('node2: lag 100000 bytes exceeds maximum_lag_on_failover 100 bytes');
    expect(await api.metrics.render(api.control.snap)).to.match(/svc_refused_operations_total\{[^}]*operation="switchover",reason="no_eligible_candidate"\} 1/);
    const refused = api.events.since(null).filter((e) => e.type === 'switchover_refused');
    expect(refused).to.have.length(1);
    expect(refused[0]!.data).to.deep.include({ code: 'no_eligible_candidate', leader: 'node0' });
  });

  it('a candidate outside the synchronous set is refused with the members explained', async () => {
    api = await healthyCluster({ config: { synchronous_mode: true }, sync: ['node1'] });
    const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2' } });
    expect(res.status).to.equal(412);
    expect(res.json.error).to.equal('candidate_not_sync_standby');
    const node2 = (res.json.members as any[]).find((m) => m.name === 'node2');
    expect(node2.reasons.map((r: any) => r.code)).to.deep.equal(['not_synchronous']);
    expect(node2.reasons[0].synchronous_members).to.deep.equal(['node1']);
  });

  it('dry_run answers who would be promoted and why, and writes nothing', async () => {
    api = await healthyCluster();
    let woken = false;
    api.control.onWake = async () => {
      woken = true;
    };
    const res = await api.request('POST', '/switchover', { body: { leader: 'node0', dry_run: true } });
    expect(res.status, res.text).to.equal(200);
    expect(res.json).to.deep.include({ dry_run: true, candidate: 'node2' });
    expect(res.json.message).to.equal('Switchover would promote "node2"');
    expect((res.json.members as any[]).map((m) => [m.name, m.eligible])).to.deep.equal([['node0', false], ['node1', true], ['node2', true]]);
    expect(await failoverKey(api)).to.equal(undefined);
    expect(woken).to.equal(false);
    expect(api.events.since(null)).to.deep.equal([]);
    const named = await api.request('POST', '/failover', { body: { candidate: 'node1', dry_run: true } });
    expect(named.json).to.deep.include({ dry_run: true, candidate: 'node1', message: 'Failover would promote "node1"' });
    const refused = await api.request('POST', '/failover', { body: { candidate: 'node9', dry_run: true } });
    expect(refused.status).to.equal(412);
    expect(refused.json.error).to.equal('candidate_not_member');
    expect(await failoverKey(api)).to.equal(undefined);
    // A dry run is not a refusal: the series stays at the 0 it starts from.
    expect(await api.metrics.render(api.control.snap)).to.include('operation="failover",reason="candidate_not_member"} 0\n');
  });

  it('an accepted switchover is reported as requested', async () => {
    api = await healthyCluster();
    agentsObey(api, 'node2');
    const res = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2' } });
    expect(res.status).to.equal(200);
    const types = api.events.since(null).map((e) => e.type);
    expect(types).to.deep.equal(['switchover_requested']);
    expect(api.events.since(null)[0]!.data).to.deep.equal({ leader: 'node0', candidate: 'node2' });
  });
});
