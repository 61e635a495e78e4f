import { expect } from 'chai';
import { ClusterKey } from '../../../../src/adapters/cluster-store/keys.js';
import { DATABASE_STATES } from '../../../../src/domain/cluster/model/states.js';
import { clusterView, memberJson, NOW, primaryFacts, snapshot, startApi, type ApiHarness } from './support.js';

describe('REST API: /config, /cluster, /history, /metrics', function () {
  let api: ApiHarness;
  afterEach(() => api.close());

  describe('/config', () => {
    beforeEach(async () => {
      api = await startApi({ prefill: { [ClusterKey.config]: JSON.stringify({ ttl: 30, loop_wait: 10, db: { parameters: { max_connections: 100, work_mem: '4MB' } } }) } });
    });

    it('GET: the stored JSON', async () => {
      const res = await api.request('GET', '/config');
      expect(res.status).to.equal(200);
      expect(res.json).to.deep.equal({ ttl: 30, loop_wait: 10, db: { parameters: { max_connections: 100, work_mem: '4MB' } } });
    });

    it('GET with no config key: {}', async () => {
      await api.dcs.delete(ClusterKey.config);
      expect((await api.request('GET', '/config')).json).to.deep.equal({});
    });

    it('PATCH: merges recursively, null removes, returns and stores the whole config, wakes the loop', async () => {
      const res = await api.request('PATCH', '/config', { body: { loop_wait: 5, db: { parameters: { work_mem: null, shared_buffers: '256MB' } }, pause: true } });
      expect(res.status).to.equal(200);
      const expected = { ttl: 30, loop_wait: 5, db: { parameters: { max_connections: 100, shared_buffers: '256MB' } }, pause: true };
      expect(res.json).to.deep.equal(expected);
      expect(JSON.parse((await api.dcs.readAll()).get(ClusterKey.config)!.value)).to.deep.equal(expected);
      expect(api.control.wakes).to.equal(1);
    });

    it('PATCH: an invalid result is 400 listing every problem, nothing written', async () => {
      const before = (await api.dcs.readAll()).get(ClusterKey.config)!;
      const res = await api.request('PATCH', '/config', { body: { ttl: 5, loop_wait: 'x', synchronous_mode: 'maybe', bogus: 1 } });
      expect(res.status).to.equal(400);
      expect(res.json.error).to.equal('invalid_config');
      const paths = (res.json.problems as { path: string }[]).map((p) => p.path);
      expect(paths).to.include.members(['ttl', 'loop_wait', 'synchronous_mode', 'bogus']);
      expect((await api.dcs.readAll()).get(ClusterKey.config)).to.deep.equal(before);
      expect(api.control.wakes).to.equal(0);
    });

    it('PATCH: the ttl rule is checked on the merged result', async () => {
      const res = await api.request('PATCH', '/config', { body: { retry_timeout: 15 } });
      expect(res.status).to.equal(400);
      expect(res.json.message).to.include('loop_wait + 2*retry_timeout');
    });

    it('PATCH: a concurrent change (compare-and-set on the revision fails) is 409', async () => {
      const put = api.dcs.put.bind(api.dcs);
      api.dcs.put = async (key, value, opts) => {
        await put(ClusterKey.config, JSON.stringify({ ttl: 40 }));
        return put(key, value, opts);
      };
      const res = await api.request('PATCH', '/config', { body: { loop_wait: 5 } });
      expect(res.status).to.equal(409);
      expect(res.json.error).to.equal('config_conflict');
    });

    it('PATCH onto no config key is 503 config_not_stored (the bootstrap writes it only where none is); PUT creates it', async () => {
      await api.dcs.delete(ClusterKey.config);
      const res = await api.request('PATCH', '/config', { body: { loop_wait: 5 } });
      expect(res.status).to.equal(503);
      expect(res.json.error).to.equal('config_not_stored');
      expect((await api.dcs.readAll()).has(ClusterKey.config)).to.equal(false);
      const put = await api.request('PUT', '/config', { body: { loop_wait: 5 } });
      expect(put.status).to.equal(200);
      expect(put.json).to.deep.equal({ loop_wait: 5 });
    });

    it('PUT: validates, then replaces the whole config and echoes it', async () => {
      const res = await api.request('PUT', '/config', { body: { ttl: 60 } });
      expect(res.status).to.equal(200);
      expect(res.json).to.deep.equal({ ttl: 60 });
      expect(JSON.parse((await api.dcs.readAll()).get(ClusterKey.config)!.value)).to.deep.equal({ ttl: 60 });
      const bad = await api.request('PUT', '/config', { body: { ttl: 'long', db: { parameters: { port: 5433 } } } });
      expect(bad.status).to.equal(400);
      expect(bad.json.message).to.include('ttl').and.include('port');
    });

    it('503 with a JSON error when the DCS is unreachable (GET, PATCH, PUT)', async () => {
      api.store.setReachable(false);
      for (const [method, body] of [['GET', undefined], ['PATCH', { ttl: 40 }], ['PUT', { ttl: 40 }]] as const) {
        const res = await api.request(method, '/config', { body });
        expect(res.status, method).to.equal(503);
        expect(res.json.error).to.equal('dcs_unavailable');
      }
    });

    it('PUT /config with no body is a 400 (it would reset every setting); {} resets on purpose', async () => {
      const res = await api.request('PUT', '/config');
      expect(res.status).to.equal(400);
      expect(res.json.message).to.match(/^request body is empty: PUT \/config replaces the whole configuration/);
      expect((await api.request('PUT', '/config', { raw: '{}' })).status).to.equal(200);
    });

    it('thousands of unknown keys: a 400 that lists 50 problems and counts the rest', async () => {
      const body = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`k${i}`, i]));
      const res = await api.request('PATCH', '/config', { body });
      expect(res.status).to.equal(400);
      expect(res.json.problems).to.have.length(51);
      expect(res.json.problems[50]).to.deep.equal({ path: '', message: 'and 4950 more problems' });
      expect(res.text.length).to.be.below(100_000);
    });

    it('GET endpoints that take no query refuse one, naming it (as the health checks do)', async () => {
      for (const path of ['/config', '/cluster', '/history', '/metrics']) {
        const res = await api.request('GET', `${path}?x=1`);
        expect(res.status, path).to.equal(400);
        expect(res.json, path).to.deep.include({ error: 'invalid_query', message: 'x: unknown query parameter (this endpoint takes none)' });
      }
    });

    it('a body that is not a JSON object is 400', async () => {
      for (const raw of ['[1,2]', '"text"', '42', 'null', '{"ttl":', 'ttl=30']) {
        const res = await api.request('PATCH', '/config', { raw, headers: { 'content-type': 'application/json' } });
        expect(res.status, raw).to.equal(400);
        expect(res.json.error, raw).to.be.oneOf(['invalid_json', 'invalid_body']);
      }
    });
  });

  describe('/cluster and /history', () => {
    beforeEach(async () => {
      api = await startApi({
        prefill: {
          [ClusterKey.leader]: 'node0',
          [ClusterKey.member('node0')]: memberJson('node0', { role: 'primary', xlog_location: 0x4000060 }),
          [ClusterKey.member('node2')]: memberJson('node2', { receive_lsn: 0x4000000, replay_lsn: 0x3000000, replication_state: 'streaming', tags: { dc: 'east' } }),
          [ClusterKey.member('node1')]: memberJson('node1', { state: 'starting' }),
          [ClusterKey.status]: JSON.stringify({ optime: 0x4000060, slots: {} }),
          [ClusterKey.failover]: JSON.stringify({ leader: 'node0', member: 'node2', scheduled_at: '2030-01-01T01:00:00+00:00' }),
          [ClusterKey.config]: JSON.stringify({ pause: true }),
        },
        // The HA loop's own view is older than ttl (30 s): /cluster must read the DCS.
        snapshot: snapshot({ clusterReadAt: NOW - 31_000 }),
      });
    });

    it('GET /cluster: the cluster document', async () => {
      const res = await api.request('GET', '/cluster');
      expect(res.status).to.equal(200);
      expect(res.json).to.deep.equal({
        scope: 'demo',
        members: [
          { name: 'node0', role: 'leader', state: 'running', api_url: 'http://127.0.0.1:8008', host: '127.0.0.1', port: 5432, timeline: 2, lsn: '0/4000060' },
          {
            name: 'node1', role: 'replica', state: 'starting', api_url: 'http://127.0.0.1:8009', host: '127.0.0.1', port: 5433, timeline: 2,
            lsn: 'unknown', lag: 'unknown', receive_lsn: 'unknown', receive_lag: 'unknown', replay_lsn: 'unknown', replay_lag: 'unknown',
          },
          {
            name: 'node2', role: 'replica', state: 'streaming', api_url: 'http://127.0.0.1:8010', host: '127.0.0.1', port: 5434, timeline: 2, tags: { dc: 'east' },
            lsn: '0/4000000', lag: 0x60, receive_lsn: '0/4000000', receive_lag: 0x60, replay_lsn: '0/3000000', replay_lag: 0x1000060,
          },
        ],
        pause: true,
        scheduled_switchover: { at: '2030-01-01T01:00:00+00:00', from: 'node0', to: 'node2' },
      });
    });

    it('GET /cluster: 503 JSON when the DCS is down', async () => {
      api.store.setReachable(false);
      const res = await api.request('GET', '/cluster');
      expect(res.status).to.equal(503);
      expect(res.json.error).to.equal('dcs_unavailable');
    });

    it('GET /cluster: a view younger than 1 s (the loop reads through the same store) is served without reading the DCS', async () => {
      await api.clusterStore.read();
      api.store.setReachable(false);
      const res = await api.request('GET', '/cluster');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
      expect(res.json.members).to.have.length(3);
    });

    it('GET /cluster after a write of this node: read anew (a node reads its own writes)', async () => {
      await api.clusterStore.read();
      expect((await api.request('PATCH', '/config', { body: { pause: null } })).status).to.equal(200);
      expect((await api.request('GET', '/cluster')).json).to.not.have.property('pause');
      expect((await api.request('DELETE', '/switchover')).status).to.equal(200);
      expect((await api.request('GET', '/cluster')).json).to.not.have.property('scheduled_switchover');
      const later = new Date(NOW + 3_600_000).toISOString();
      const posted = await api.request('POST', '/switchover', { body: { leader: 'node0', candidate: 'node2', scheduled_at: later } });
      expect(posted.status, JSON.stringify(posted.json)).to.equal(202);
      expect((await api.request('GET', '/cluster')).json.scheduled_switchover).to.deep.include({ from: 'node0', to: 'node2' });
      expect(api.control.refreshes, 'the snapshot follows each write').to.equal(3);
    });

    it('GET /cluster: an older view is replaced by a DCS read, then reused for 1 s whatever the load', async () => {
      api.control.snap = snapshot({ cluster: clusterView({ leader: 'node7' }), clusterReadAt: NOW - 1000 });
      let reads = 0;
      const readAll = api.dcs.readAll.bind(api.dcs);
      api.dcs.readAll = () => {
        reads++;
        return readAll();
      };
      const answers = await Promise.all(Array.from({ length: 20 }, () => api.request('GET', '/cluster')));
      expect(answers.map((r) => r.status)).to.deep.equal(Array(20).fill(200));
      expect(answers[0]!.json.members).to.have.length(3);
      expect(reads).to.be.at.most(2);
      const before = reads;
      for (let i = 0; i < 5; i++) expect((await api.request('GET', '/cluster')).json.members).to.have.length(3);
      expect(reads).to.equal(before);
    });

    it('GET /cluster: with the DCS down, a view up to ttl old answers; older is 503', async () => {
      await api.clusterStore.read();
      api.store.setReachable(false);
      await api.clock.sleep(29_000);
      const res = await api.request('GET', '/cluster');
      expect(res.status).to.equal(200);
      expect(res.json.members).to.have.length(3);
      await api.clock.sleep(2_000);
      expect((await api.request('GET', '/cluster')).status).to.equal(503);
    });

    it('GET /history: the agent history lines; [] on timeline 1', async () => {
      expect((await api.request('GET', '/history')).json).to.deep.equal([]);
      api.control.historyLines = [[1, 0x3000060, 'no recovery target specified', '2029-12-31T10:00:00+00:00', 'node0']];
      const res = await api.request('GET', '/history');
      expect(res.status).to.equal(200);
      expect(res.json).to.deep.equal([[1, 0x3000060, 'no recovery target specified', '2029-12-31T10:00:00+00:00', 'node0']]);
    });
  });

  describe('values in the DCS no writer of this version makes', () => {
    const deep = (d: number) => `${'['.repeat(d)}${']'.repeat(d)}`;

    it('GET /config with a configuration nested 20000 levels deep: {} (it used to be a 500: JSON.stringify ran out of stack)', async () => {
      api = await startApi({ prefill: { [ClusterKey.config]: `{"ttl":30,"x":${deep(20_000)}}` } });
      const res = await api.request('GET', '/config');
      expect([res.status, res.json]).to.deep.equal([200, {}]);
      expect(api.logger.lines.filter((l) => l.level === 'error')).to.deep.equal([]);
    });

    it('GET /cluster and /ui/data with a member whose scheduled restart nests 20000 levels deep: 200 without it (they used to be 500s)', async () => {
      const odd = memberJson('node2').replace(/}$/, `,"scheduled_restart":{"schedule":"2030-01-01T01:00:00+00:00","role":${deep(20_000)}}}`);
      api = await startApi({ prefill: { [ClusterKey.leader]: 'node0', [ClusterKey.member('node0')]: memberJson('node0', { role: 'primary' }), [ClusterKey.member('node2')]: odd } });
      const cluster = await api.request('GET', '/cluster');
      expect(cluster.status).to.equal(200);
      expect(cluster.json.members.map((m: { name: string }) => m.name)).to.deep.equal(['node0']);
      expect((await api.request('GET', '/ui/data')).status).to.equal(200);
      expect(api.logger.lines.filter((l) => l.level === 'error')).to.deep.equal([]);
    });
  });

  describe('/metrics', () => {
    const NAMES = [
      'svc_version', 'svc_database_running', 'svc_postmaster_start_time', 'svc_primary', 'svc_xlog_location', 'svc_standby_leader',
      'svc_replica', 'svc_sync_standby', 'svc_quorum_standby', 'svc_xlog_received_location', 'svc_xlog_replayed_location',
      'svc_xlog_replayed_timestamp', 'svc_xlog_paused', 'svc_database_streaming', 'svc_database_in_archive_recovery',
      'svc_database_server_version', 'svc_cluster_unlocked', 'svc_failsafe_mode_is_active', 'svc_database_timeline',
      'svc_dcs_last_seen', 'svc_pending_restart', 'svc_is_paused', 'svc_database_state',
    ];
    beforeEach(async () => {
      api = await startApi({ snapshot: snapshot({ facts: primaryFacts(), leader: true }) });
    });

    it('every svc_* metric with {scope, name} labels and HELP, in Prometheus text', async () => {
      const res = await api.request('GET', '/metrics');
      expect(res.status).to.equal(200);
      expect(res.headers.get('content-type')).to.match(/^text\/plain/);
      for (const name of NAMES) {
        expect(res.text, name).to.match(new RegExp(`^# HELP ${name} \\S`, 'm'));
        expect(res.text, name).to.match(new RegExp(`^${name}\\{scope="demo",name="node1"\\} -?[0-9.e+]+$`, 'm'));
      }
      const value = (name: string) => Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(res.text)![1]);
      expect(value('svc_version')).to.equal(10200);
      expect(value('svc_primary')).to.equal(1);
      expect(value('svc_replica')).to.equal(0);
      expect(value('svc_xlog_location')).to.equal(100_000_000);
      expect(value('svc_database_server_version')).to.equal(150018);
      expect(value('svc_database_timeline')).to.equal(2);
      expect(value('svc_database_state')).to.equal(5);
      expect(value('svc_postmaster_start_time')).to.equal(Date.parse('2029-12-31T23:00:00Z') / 1000);
      expect(res.text).to.match(/^# TYPE svc_xlog_location counter$/m);
      expect(res.text).to.match(/^# TYPE svc_primary gauge$/m);
    });

    it('svc_database_state: HELP carries the whole mapping', async () => {
      const res = await api.request('GET', '/metrics');
      const help = /^# HELP svc_database_state (.*)$/m.exec(res.text)![1]!;
      for (const s of DATABASE_STATES) expect(help).to.include(`${s.value}=${s.name}`);
      expect(help).to.include('unknown=-1');
    });

    it('agent self metrics: loop duration histogram, DCS errors, leader changes', async () => {
      let res = await api.request('GET', '/metrics');
      expect(res.text).to.match(/^# TYPE svc_loop_duration_seconds histogram$/m);
      expect(res.text).to.match(/^svc_leader_changes_total\{scope="demo",name="node1"\} 0$/m);
      expect(res.text).to.match(/^# TYPE svc_dcs_errors_total counter$/m);
      api.metrics.loopCompleted(0.2);
      api.metrics.loopCompleted(0.02);
      api.metrics.dcsError('read');
      api.metrics.leaderChanged('node2');
      res = await api.request('GET', '/metrics');
      expect(res.text).to.match(/^svc_loop_duration_seconds_count\{scope="demo",name="node1"\} 2$/m);
      expect(res.text).to.match(/^svc_loop_duration_seconds_bucket\{le="0.025",scope="demo",name="node1"\} 1$/m);
      expect(res.text).to.match(/^svc_dcs_errors_total\{scope="demo",name="node1",operation="read"\} 1$/m);
      expect(res.text).to.match(/^svc_leader_changes_total\{scope="demo",name="node1"\} 1$/m);
    });
  });
});
