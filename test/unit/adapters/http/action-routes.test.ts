import { expect } from 'chai';
import { clusterView, primaryFacts, replicaFacts, snapshot, startApi, type ApiHarness } from './support.js';

const FUTURE = '2030-01-01T01:00:00+00:00';

describe('REST API: /restart, /reload, /reinitialize, /failsafe', function () {
  let api: ApiHarness;
  beforeEach(async () => {
    api = await startApi();
  });
  afterEach(() => api.close());

  describe('POST /restart', () => {
    it('immediate: 200 with the agent message; conditions and timeout passed on (timeout in seconds)', async () => {
      const res = await api.request('POST', '/restart', { body: { restart_pending: true, role: 'replica', db_version: '16.1', timeout: '5min' } });
      expect(res.status).to.equal(200);
      expect(res.json).to.deep.equal({ message: 'restarted successfully' });
      expect(api.control.restarts).to.deep.equal([{ restart_pending: true, role: 'replica', db_version: '16.1', timeout: 300 }]);
    });

    it('an empty body is an unconditional restart', async () => {
      const res = await api.request('POST', '/restart');
      expect(res.status).to.equal(200);
      expect(api.control.restarts).to.deep.equal([{}]);
    });

    it('timeout as a number of seconds, "30s", "500ms"', async () => {
      for (const [timeout, seconds] of [[12, 12], ['30s', 30], ['500ms', 0.5], ['1h', 3600]] as const) {
        api.control.restarts = [];
        expect((await api.request('POST', '/restart', { body: { timeout } })).status).to.equal(200);
        expect(api.control.restarts[0]!.timeout).to.equal(seconds);
      }
    });

    for (const [title, body, field] of [
      ['an unknown role', { role: 'master' }, 'role'],
      ['a malformed db_version', { db_version: 'sixteen' }, 'db_version'],
      ['a malformed timeout', { timeout: 'soon' }, 'timeout'],
      ['a zero timeout', { timeout: 0 }, 'timeout'],
      ['a negative timeout', { timeout: -5 }, 'timeout'],
      ['a timeout beyond a timer', { timeout: '1000h' }, 'timeout'],
      ['a boolean timeout', { timeout: true }, 'timeout'],
      ['restart_pending not boolean', { restart_pending: 'yes' }, 'restart_pending'],
      ['an unknown field', { now: true }, 'now'],
    ] as const) {
      it(`${title}: 400 naming ${field}`, async () => {
        const res = await api.request('POST', '/restart', { body });
        expect(res.status).to.equal(400);
        expect(res.json.error).to.equal('invalid_body');
        expect(res.json.message).to.include(field);
        expect(res.json.problems, 'one problem for one field').to.have.length(1);
        expect(api.control.restarts).to.deep.equal([]);
      });
    }

    it('scheduled: 202, recorded with its conditions', async () => {
      const res = await api.request('POST', '/restart', { body: { schedule: FUTURE, role: 'replica' } });
      expect(res.status).to.equal(202);
      expect(res.json).to.deep.equal({ message: 'Restart scheduled', schedule: FUTURE });
      expect(api.control.scheduled).to.deep.equal({ role: 'replica', schedule: FUTURE });
      expect(api.control.restarts).to.deep.equal([]);
    });

    it('scheduled while one is already scheduled: 409', async () => {
      api.control.scheduled = { schedule: FUTURE };
      const res = await api.request('POST', '/restart', { body: { schedule: FUTURE } });
      expect(res.status).to.equal(409);
      expect(res.json.error).to.equal('already_scheduled');
    });

    it('scheduled while paused: 400', async () => {
      api.control.snap = snapshot({ config: { pause: true } });
      const res = await api.request('POST', '/restart', { body: { schedule: FUTURE } });
      expect(res.status).to.equal(400);
      expect(res.json.error).to.equal('paused');
      expect(api.control.restarts).to.deep.equal([]);
    });

    it('schedule without a zone 400, in the past or unparseable 422, naming schedule', async () => {
      for (const [schedule, status] of [['2030-01-01T01:00:00', 400], ['2029-01-01T00:00:00Z', 422], ['next week', 422]] as const) {
        const res = await api.request('POST', '/restart', { body: { schedule } });
        expect(res.status, schedule).to.equal(status);
        expect(res.json.message).to.include('schedule');
      }
    });

    it('conditions not met, another action in progress, start timed out: 503 with the reason', async () => {
      for (const error of ['restart_conditions_not_met', 'action_in_progress', 'start_failed'] as const) {
        api.control.restartResult = { ok: false, error, message: `because ${error}` };
        const res = await api.request('POST', '/restart');
        expect(res.status).to.equal(503);
        expect(res.json).to.deep.equal({ error, message: `because ${error}` });
      }
    });

    it('DELETE /restart: 200 when one was scheduled, 404 otherwise', async () => {
      api.control.scheduled = { schedule: FUTURE };
      expect((await api.request('DELETE', '/restart')).status).to.equal(200);
      expect(api.control.scheduled).to.equal(null);
      const res = await api.request('DELETE', '/restart');
      expect(res.status).to.equal(404);
      expect(res.json.error).to.equal('not_scheduled');
    });
  });

  describe('POST /reload', () => {
    it('202 reload scheduled', async () => {
      const res = await api.request('POST', '/reload');
      expect(res.status).to.equal(202);
      expect(res.json).to.deep.equal({ message: 'reload scheduled' });
      expect(api.control.reloads).to.equal(1);
    });

    it('an invalid local file is refused with its problems, and nothing is scheduled', async () => {
      api.control.localConfigProblems = [{ path: 'tags.nofailovr', message: 'not a tag Warden knows, and close to nofailover' }];
      const res = await api.request('POST', '/reload');
      expect(res.status).to.equal(400);
      expect(res.json).to.deep.include({ error: 'invalid_local_config', message: 'tags.nofailovr: not a tag Warden knows, and close to nofailover' });
      expect(api.control.reloads).to.equal(0);
    });
  });

  describe('POST /reinitialize', () => {
    it('on a replica: 200 reinitialize started; from-leader and from_leader both accepted', async () => {
      let res = await api.request('POST', '/reinitialize', { body: { force: true, 'from-leader': true } });
      expect(res.status).to.equal(200);
      expect(res.json).to.deep.equal({ message: 'reinitialize started' });
      res = await api.request('POST', '/reinitialize', { body: { from_leader: true } });
      expect(res.status).to.equal(200);
      res = await api.request('POST', '/reinitialize');
      expect(res.status).to.equal(200);
      expect(api.control.reinits).to.deep.equal([
        { force: true, fromLeader: true },
        { force: false, fromLeader: true },
        { force: false, fromLeader: false },
      ]);
    });
    it('on the leader: 503', async () => {
      api.control.snap = snapshot({ facts: primaryFacts(), leader: true });
      const res = await api.request('POST', '/reinitialize');
      expect(res.status).to.equal(503);
      expect(res.json.error).to.equal('is_leader');
      expect(api.control.reinits).to.deep.equal([]);
    });
    it('without a leader: 503', async () => {
      api.control.snap = snapshot({ facts: replicaFacts(), cluster: clusterView({ leader: null }) });
      const res = await api.request('POST', '/reinitialize');
      expect(res.status).to.equal(503);
      expect(res.json.error).to.equal('no_leader');
    });
    it('while another action runs (the agent refuses): 503', async () => {
      api.control.reinitResult = { ok: false, error: 'action_in_progress', message: 'restart in progress' };
      const res = await api.request('POST', '/reinitialize');
      expect(res.status).to.equal(503);
      expect(res.json.error).to.equal('action_in_progress');
    });
    it('a bad body: 400 naming the field', async () => {
      const res = await api.request('POST', '/reinitialize', { body: { force: 'yes' } });
      expect(res.status).to.equal(400);
      expect(res.json.message).to.include('force');
    });
  });

  describe('/failsafe', () => {
    it('GET: 503 when no failsafe members are known, 200 with them otherwise', async () => {
      expect((await api.request('GET', '/failsafe')).status).to.equal(503);
      api.control.snap = snapshot({ cluster: { ...clusterView(), failsafe: { node0: 'http://a', node1: 'http://b' } } });
      const res = await api.request('GET', '/failsafe');
      expect(res.status).to.equal(200);
      expect(res.json).to.deep.equal({ node0: 'http://a', node1: 'http://b' });
    });
    it('POST: 200 Accepted, 409 rejected, 503 when failsafe mode is off, 400 on a bad body', async () => {
      const body = { name: 'node0', members: { node0: 'http://a', node1: 'http://b' } };
      expect((await api.request('POST', '/failsafe', { body })).status).to.equal(503);
      api.control.snap = snapshot({ config: { failsafe_mode: true } });
      const ok = await api.request('POST', '/failsafe', { body });
      expect(ok.status).to.equal(200);
      expect(ok.json).to.deep.equal({ message: 'Accepted' });
      expect(api.control.failsafePings).to.deep.equal([body]);
      api.control.failsafeAccept = false;
      expect((await api.request('POST', '/failsafe', { body })).status).to.equal(409);
      const bad = await api.request('POST', '/failsafe', { body: { name: 'node0' } });
      expect(bad.status).to.equal(400);
      expect(bad.json.message).to.include('members');
    });
  });
});
