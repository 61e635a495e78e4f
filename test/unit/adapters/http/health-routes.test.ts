import { expect } from 'chai';
import { stoppedFacts } from '../../../../src/domain/cluster/model/facts.js';
import type { NodeSnapshot } from '../../../../src/domain/cluster/model/snapshot.js';
import { clusterView, NOW, primaryFacts, replicaFacts, snapshot, startApi, type ApiHarness } from './support.js';

/** The roles a node can be in, as published snapshots. */
const ROLES: Record<string, () => NodeSnapshot> = {
  primary: () => snapshot({ facts: primaryFacts(), leader: true }),
  standby_leader: () => snapshot({ facts: replicaFacts(), leader: true, standbyCluster: true }),
  replica: () => snapshot({ facts: replicaFacts() }),
  sync_standby: () => snapshot({ facts: replicaFacts(), cluster: clusterView({ sync: ['node1'], config: { synchronous_mode: true } }), config: { synchronous_mode: true } }),
  quorum_standby: () =>
    snapshot({ facts: replicaFacts(), cluster: clusterView({ sync: ['node1'], config: { synchronous_mode: 'quorum' } }), config: { synchronous_mode: 'quorum' } }),
  primary_without_lock: () => snapshot({ facts: primaryFacts(), leader: false }),
  stopped: () => snapshot({ facts: stoppedFacts('stopped', true) }),
};

const O = 200;
const X = 503;
/** Expected code per path, in the column order of ROLES. */
const TABLE: Record<string, number[]> = {
  //                    primary sl  replica sync quorum no-lock stopped
  '/': /*             */ [O, X, X, X, X, X, X],
  '/primary': /*      */ [O, X, X, X, X, X, X],
  '/read-write': /*   */ [O, X, X, X, X, X, X],
  '/standby-leader': /**/ [X, O, X, X, X, X, X],
  '/standby_leader': /**/ [X, O, X, X, X, X, X],
  '/leader': /*       */ [O, O, X, X, X, X, X],
  '/replica': /*      */ [X, X, O, O, O, X, X],
  '/read-only': /*    */ [O, O, O, O, O, X, X],
  '/synchronous': /*  */ [X, X, X, O, X, X, X],
  '/sync': /*         */ [X, X, X, O, X, X, X],
  '/read-only-sync': /**/ [O, O, X, O, X, X, X],
  '/quorum': /*       */ [X, X, X, X, O, X, X],
  '/read-only-quorum': [O, O, X, X, O, X, X],
  '/asynchronous': /* */ [X, X, O, X, X, X, X],
  '/async': /*        */ [X, X, O, X, X, X, X],
  '/health': /*       */ [O, O, O, O, O, O, X],
  '/liveness': /*     */ [O, O, O, O, O, O, O],
  '/readiness': /*    */ [O, O, O, O, O, X, X],
};

describe('REST API: health checks', function () {
  let api: ApiHarness;
  before(async () => {
    api = await startApi();
  });
  after(() => api.close());

  const roleNames = Object.keys(ROLES);
  for (const [path, codes] of Object.entries(TABLE)) {
    it(`${path}: ${roleNames.map((r, i) => `${r}=${codes[i]}`).join(' ')} (GET, HEAD, OPTIONS)`, async () => {
      for (const [i, role] of roleNames.entries()) {
        api.control.snap = ROLES[role]!();
        const get = await api.request('GET', path);
        expect(get.status, `GET ${path} as ${role}`).to.equal(codes[i]);
        expect(get.headers.get('content-type')).to.match(/^application\/json/);
        expect(get.json.role, 'body is the status document').to.equal(api.control.snap.status.role);
        const head = await api.request('HEAD', path);
        expect(head.status, `HEAD ${path} as ${role}`).to.equal(codes[i]);
        expect(head.text).to.equal('');
        const options = await api.request('OPTIONS', path);
        expect(options.status, `OPTIONS ${path} as ${role}`).to.equal(codes[i]);
        expect(options.text).to.equal('');
      }
    });
  }

  it('GET /node is always 200 with the status document, keys in spec order', async () => {
    for (const role of roleNames) {
      api.control.snap = ROLES[role]!();
      const res = await api.request('GET', '/node');
      expect(res.status).to.equal(200);
      expect(res.json).to.deep.equal(JSON.parse(JSON.stringify(api.control.snap.status)));
      expect(Object.keys(res.json)[0]).to.equal('state');
      expect(Object.keys(res.json).at(-1)).to.equal('svc');
    }
    const head = await api.request('HEAD', '/node');
    expect(head.status).to.equal(200);
    expect(head.text).to.equal('');
  });

  it('GET /node?fresh=true answers the status with the server probed now (the leader race asks so); a bad value or another parameter is a 400', async () => {
    api.control.snap = ROLES['replica']!();
    api.control.fresh = snapshot({ facts: replicaFacts({ receivedLocation: 777 }) }).status;
    const before = api.control.freshCalls;
    const fresh = await api.request('GET', '/node?fresh=true');
    expect(fresh.status).to.equal(200);
    expect(fresh.json).to.deep.equal(JSON.parse(JSON.stringify(api.control.fresh)));
    expect(api.control.freshCalls).to.equal(before + 1);
    const published = await api.request('GET', '/node?fresh=false');
    expect(published.json).to.deep.equal(JSON.parse(JSON.stringify(api.control.snap.status)));
    expect(api.control.freshCalls, 'fresh=false and no query read the published status').to.equal(before + 1);
    for (const q of ['fresh=yes', 'fresh=true&fresh=true', 'lag=1', 'fresh']) {
      const bad = await api.request('GET', `/node?${q}`);
      expect(bad.status, q).to.equal(400);
      expect(bad.json.error, q).to.equal('invalid_query');
    }
    api.control.freshFails = true;
    const failed = await api.request('GET', '/node?fresh=true');
    expect(failed.status, 'a failed probe is no answer: an older one would defeat the purpose').to.equal(503);
    expect(failed.json.error).to.equal('probe_failed');
    api.control.freshFails = false;
    api.control.fresh = null;
  });

  it('the body is re-serialised only when a new snapshot is published', async () => {
    api.control.snap = ROLES['primary']!();
    const a = await api.request('GET', '/primary');
    api.control.snap = snapshot({ facts: primaryFacts({ walLocation: 123 }), leader: true });
    const b = await api.request('GET', '/primary');
    expect(a.json.xlog.location).to.equal(100_000_000);
    expect(b.json.xlog.location).to.equal(123);
  });

  describe('query parameters', () => {
    const replica = () => snapshot({ facts: replicaFacts(), node: { tags: { dc: 'east', backup: true, weight: 1 } } });

    it('/replica?lag: bytes or sizes; the lag is the status optime minus the replayed position (1,000,000 bytes here)', async () => {
      api.control.snap = replica();
      expect((await api.request('GET', '/replica?lag=1000000')).status).to.equal(200);
      expect((await api.request('GET', '/replica?lag=999999')).status).to.equal(503);
      expect((await api.request('GET', '/replica?lag=16MB')).status).to.equal(200);
      expect((await api.request('GET', '/replica?lag=16kB')).status).to.equal(503);
      expect((await api.request('GET', '/async?lag=1GB')).status).to.equal(200);
      expect((await api.request('GET', '/async?lag=1B')).status).to.equal(503);
    });

    it('an invalid lag, mode, replication_state or an unknown parameter is 400 naming it, never 500', async () => {
      api.control.snap = replica();
      for (const [path, name] of [
        ['/replica?lag=abc', 'lag'],
        ['/replica?lag=1.5', 'lag'],
        ['/replica?lag=16mb', 'lag'],
        ['/readiness?mode=bogus', 'mode'],
        ['/replica?replication_state=sleeping', 'replication_state'],
        ['/primary?lagg=1', 'lagg'],
        ['/readiness?tag_dc=east', 'tag_dc'],
        ['/replica?lag=1&lag=2', 'lag'],
      ] as const) {
        const res = await api.request('GET', path);
        expect(res.status, path).to.equal(400);
        expect(res.json.error, path).to.equal('invalid_query');
        expect(res.json.message, path).to.include(name);
        expect((await api.request('HEAD', path)).status, `HEAD ${path}`).to.equal(400);
      }
    });

    it('/replica?replication_state=streaming requires streaming', async () => {
      api.control.snap = replica();
      expect((await api.request('GET', '/replica?replication_state=streaming')).status).to.equal(200);
      expect((await api.request('GET', '/replica?replication_state=in%20archive%20recovery')).status).to.equal(503);
    });

    it('/replica tag filters: every tag must exist with the value (booleans and numbers as lowercase strings)', async () => {
      api.control.snap = replica();
      expect((await api.request('GET', '/replica?tag_dc=east')).status).to.equal(200);
      expect((await api.request('GET', '/replica?tag_dc=east&tag_backup=true&tag_weight=1')).status).to.equal(200);
      expect((await api.request('GET', '/replica?tag_dc=west')).status).to.equal(503);
      expect((await api.request('GET', '/replica?tag_rack=r1')).status).to.equal(503);
    });

    it('leader-type checks accept tag parameters and ignore them', async () => {
      api.control.snap = ROLES['primary']!();
      for (const p of ['/', '/primary', '/read-write', '/leader']) {
        expect((await api.request('GET', `${p}?tag_dc=nowhere`)).status, p).to.equal(200);
      }
      api.control.snap = ROLES['standby_leader']!();
      expect((await api.request('GET', '/standby-leader?tag_dc=nowhere')).status).to.equal(200);
      expect((await api.request('GET', '/standby_leader?tag_dc=nowhere')).status).to.equal(200);
    });

    it('/replica fails with noloadbalance set', async () => {
      api.control.snap = snapshot({ facts: replicaFacts(), node: { tags: { noloadbalance: true } } });
      expect((await api.request('GET', '/replica')).status).to.equal(503);
    });

    it('/readiness: lag defaults to maximum_lag_on_failover; mode=write measures the received position', async () => {
      api.control.snap = snapshot({ facts: replicaFacts(), config: { maximum_lag_on_failover: 600_000 } });
      expect((await api.request('GET', '/readiness')).status).to.equal(503);
      expect((await api.request('GET', '/readiness?mode=write')).status).to.equal(200);
      expect((await api.request('GET', '/readiness?lag=1MB')).status).to.equal(200);
      api.control.snap = snapshot({ facts: replicaFacts({ replicationState: 'in archive recovery' }) });
      expect((await api.request('GET', '/readiness')).status).to.equal(503);
    });
  });

  describe('staleness', () => {
    it('/liveness: 503 after ttl on a primary, after 2*ttl on a replica, 200 while paused', async () => {
      api.control.snap = snapshot({ facts: primaryFacts(), leader: true, lastLoopAt: NOW - 31_000 });
      expect((await api.request('GET', '/liveness')).status).to.equal(503);
      api.control.snap = snapshot({ facts: replicaFacts(), lastLoopAt: NOW - 31_000 });
      expect((await api.request('GET', '/liveness')).status).to.equal(200);
      api.control.snap = snapshot({ facts: replicaFacts(), lastLoopAt: NOW - 61_000 });
      expect((await api.request('GET', '/liveness')).status).to.equal(503);
      api.control.snap = snapshot({ facts: replicaFacts(), lastLoopAt: NOW - 600_000, config: { pause: true } });
      expect((await api.request('GET', '/liveness')).status).to.equal(200);
    });

    it('/sync, /async, /quorum need a DCS view younger than ttl', async () => {
      api.control.snap = { ...ROLES['sync_standby']!(), clusterReadAt: NOW - 31_000 };
      expect((await api.request('GET', '/sync')).status).to.equal(503);
      api.control.snap = { ...ROLES['replica']!(), clusterReadAt: NOW - 31_000 };
      expect((await api.request('GET', '/async')).status).to.equal(503);
      expect((await api.request('GET', '/replica')).status).to.equal(200);
    });

    it('the leader lock counts only until it expires', async () => {
      api.control.snap = { ...ROLES['primary']!(), leaderLockExpiresAt: NOW - 1 };
      expect((await api.request('GET', '/primary')).status).to.equal(503);
      expect((await api.request('GET', '/leader')).status).to.equal(503);
    });
  });

  describe('methods and paths', () => {
    it('a wrong method on a health path is 405 with Allow', async () => {
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
        const res = await api.request(method, '/primary');
        expect(res.status, method).to.equal(405);
        expect(res.headers.get('allow')).to.equal('GET, HEAD, OPTIONS');
        expect(res.json.error).to.equal('method_not_allowed');
      }
    });

    it('a health path with a trailing slash or in another case is answered as the path itself', async () => {
      api.control.snap = ROLES.replica!();
      for (const [path, code] of [['/primary/', X], ['/Replica', O], ['/REPLICA/', O], ['/replica/?lag=abc', 400]] as const) {
        const res = await api.request('GET', path);
        expect(res.status, path).to.equal(code);
      }
      expect((await api.request('POST', '/replica/')).status).to.equal(405);
    });

    it('every health path with one trailing slash answers as without it, queries included (Patroni does; a load balancer may be set up either way)', async () => {
      const queries = ['', '?lag=1MB', '?lag=16777216&replication_state=streaming', '?tag_nofailover=true', '?lag=abc', '?mode=write&lag=1GB'];
      for (const role of ['primary', 'replica', 'sync_standby']) {
        api.control.snap = ROLES[role]!();
        for (const path of Object.keys(TABLE)) {
          for (const query of queries) {
            for (const method of ['GET', 'HEAD', 'OPTIONS']) {
              const plain = await api.request(method, `${path}${query}`);
              const slashed = await api.request(method, `${path}/${query}`);
              const label = `${method} ${path}/${query} as ${role}`;
              expect(slashed.status, label).to.equal(plain.status);
              expect(slashed.text, label).to.equal(plain.text);
              expect(slashed.headers.get('content-type'), label).to.equal(plain.headers.get('content-type'));
            }
          }
        }
      }
      api.control.snap = ROLES.replica!();
      expect((await api.request('GET', '/replica/?lag=1MB')).status).to.equal(O);
      expect((await api.request('GET', '/primary/')).status).to.equal(X);
      // One slash only: two are another path.
      expect((await api.request('GET', '/replica//')).status).to.equal(404);
    });

    it('an unknown path is 404 JSON, for any method', async () => {
      for (const method of ['GET', 'POST', 'DELETE']) {
        const res = await api.request(method, '/nope');
        expect(res.status).to.equal(404);
        expect(res.json).to.deep.include({ error: 'not_found' });
      }
    });

    it('a wrong method on another known path is 405 with Allow; OPTIONS there is 204 with Allow', async () => {
      const res = await api.request('DELETE', '/failover');
      expect(res.status).to.equal(405);
      expect(res.headers.get('allow')).to.equal('POST, OPTIONS');
      const get = await api.request('GET', '/switchover');
      expect(get.status).to.equal(405);
      expect(get.headers.get('allow')).to.equal('POST, DELETE, OPTIONS');
      const opt = await api.request('OPTIONS', '/config');
      expect(opt.status).to.equal(204);
      expect(opt.headers.get('allow')).to.equal('GET, HEAD, PUT, PATCH, OPTIONS');
      const node = await api.request('POST', '/node');
      expect(node.status).to.equal(405);
    });
  });
});
