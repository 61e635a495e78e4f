import { expect } from 'chai';
import { reinit } from '../../../../src/app/ctl/reinit.js';
import { reload } from '../../../../src/app/ctl/reload.js';
import { restart } from '../../../../src/app/ctl/restart.js';
import { failure } from './failure.js';
import { apiOf, json, makeCtx, member, seedCluster, type TestCtx } from './fixtures.js';

async function cluster(spec: Parameters<typeof seedCluster>[1] = {}): Promise<TestCtx> {
  const ctx = makeCtx();
  await seedCluster(ctx.kv, spec);
  return ctx;
}

describe('ctl restart', () => {
  it('restarts every member by default, after one confirmation, printing each answer', async () => {
    const ctx = await cluster();
    ctx.answers.push(true);
    ctx.rest.on('POST', 'restart', json(200, { message: 'restarted successfully' }));
    await restart(ctx, []);
    expect(ctx.questions).to.deep.equal(['Restart node1, node2, node3 now?']);
    expect(ctx.rest.summary()).to.deep.equal(['POST :8008/restart', 'POST :8009/restart', 'POST :8010/restart']);
    expect(ctx.rest.calls[0]!.body).to.deep.equal({});
    expect(ctx.rest.calls[0]!.opts!.timeoutMs).to.equal((300 + 60) * 1000);
    expect(ctx.outs).to.deep.equal(['node1: restarted successfully', 'node2: restarted successfully', 'node3: restarted successfully']);
  });

  it('--role filters members; --db-version, --timeout and --scheduled go into the body', async () => {
    const ctx = await cluster();
    ctx.rest.on('POST', 'restart', json(202, { message: 'restart scheduled' }));
    await restart(ctx, [], { role: 'replica', dbVersion: '15.7', timeout: '2min', scheduled: '2024-01-01T12:30:00Z', force: true });
    expect(ctx.rest.summary()).to.deep.equal(['POST :8009/restart', 'POST :8010/restart']);
    expect(ctx.rest.calls[0]!.body).to.deep.equal({ db_version: '15.7', timeout: 120, schedule: '2024-01-01T12:30:00.000Z' });
    expect(ctx.rest.calls[0]!.opts!.timeoutMs).to.equal(180_000);
    expect(ctx.outs).to.deep.equal(['node2: restart scheduled', 'node3: restart scheduled']);
  });

  it('--role leader and named members', async () => {
    const ctx = await cluster();
    ctx.rest.on('POST', 'restart', json(200, { message: 'ok' }));
    await restart(ctx, ['node1', 'node2'], { role: 'leader', force: true });
    expect(ctx.rest.summary()).to.deep.equal(['POST :8008/restart']);
    expect((await failure(restart(ctx, ['node2'], { role: 'primary', force: true }))).message).to.equal('no member matches role primary among node2');
  });

  it('--pending restarts only members flagged pending, with restart_pending: true; nothing to do is not an error', async () => {
    const ctx = await cluster({ members: [member(1, { pendingRestart: true }), member(2), member(3, { pendingRestart: true })] });
    ctx.rest.on('POST', 'restart', json(200, { message: 'ok' })).on('GET', 'node', json(200, { state: 'running' }));
    await restart(ctx, [], { pending: true, force: true });
    expect(ctx.rest.summary()).to.deep.equal(['GET :8009/node', 'POST :8008/restart', 'POST :8010/restart']);
    expect(ctx.rest.calls[1]!.body).to.deep.equal({ restart_pending: true });

    const none = await cluster();
    none.rest.on('GET', 'node', json(200, { state: 'running' }), apiOf(1)).on('GET', 'node', 'unreachable');
    await restart(none, [], { pending: true });
    expect(none.outs).to.deep.equal(['No selected member has a pending restart: nothing to do']);
    expect(none.questions).to.deep.equal([]);
  });

  it('--pending also restarts a member whose own status shows a pending restart its DCS record does not show yet; one no longer pending is not a failure', async () => {
    const ctx = await cluster();
    ctx.rest
      .on('GET', 'node', json(200, { state: 'running', pending_restart: true }), apiOf(2))
      .on('GET', 'node', json(200, { state: 'running', pending_restart: true }), apiOf(3))
      .on('GET', 'node', json(200, { state: 'running' }))
      .on('POST', 'restart', json(503, { error: 'restart_conditions_not_met', message: 'restart conditions are not satisfied: no restart pending' }), apiOf(3))
      .on('POST', 'restart', json(200, { message: 'restarted' }));
    await restart(ctx, [], { pending: true, force: true });
    expect(ctx.rest.summary().filter((c) => c.startsWith('POST'))).to.deep.equal(['POST :8009/restart', 'POST :8010/restart']);
    expect(ctx.outs).to.deep.equal(['node2: restarted', 'node3: no restart pending any more: nothing done']);
  });

  it('--pending --scheduled does not filter now: every selected member gets the restart, with the condition it checks at the time', async () => {
    const ctx = await cluster({ members: [member(1, { pendingRestart: true }), member(2), member(3)] });
    ctx.rest.on('POST', 'restart', json(202, { message: 'restart scheduled' }));
    await restart(ctx, [], { pending: true, scheduled: '2030-01-01T03:00:00Z', force: true });
    expect(ctx.rest.summary()).to.deep.equal(['POST :8008/restart', 'POST :8009/restart', 'POST :8010/restart']);
    expect(ctx.rest.calls[1]!.body).to.deep.equal({ restart_pending: true, schedule: '2030-01-01T03:00:00.000Z' });
  });

  it('--scheduled --force first deletes a restart already scheduled on the member', async () => {
    const ctx = await cluster({ members: [member(1, { scheduledRestart: { schedule: '2024-01-01T12:10:00Z' } }), member(2)] });
    ctx.rest.on('DELETE', 'restart', json(200, { message: 'deleted' })).on('POST', 'restart', json(202, { message: 'scheduled' }));
    await restart(ctx, [], { scheduled: '2024-01-01T12:20:00Z', force: true });
    expect(ctx.rest.summary()).to.deep.equal(['DELETE :8008/restart', 'POST :8008/restart', 'POST :8009/restart']);
    expect(ctx.outs).to.deep.equal(['node1: the restart scheduled at 2024-01-01T12:10:00Z is replaced; scheduled', 'node2: scheduled']);
  });

  it('--db-version: a member whose server is not older is not restarted, and that is no failure', async () => {
    const ctx = await cluster();
    ctx.rest
      .on('POST', 'restart', json(503, { error: 'restart_conditions_not_met', message: 'restart conditions are not satisfied: the server version 15.18 is not lower than 15.1' }), apiOf(2))
      .on('POST', 'restart', json(200, { message: 'restarted' }));
    await restart(ctx, [], { dbVersion: '15.1', force: true });
    expect(ctx.outs).to.deep.equal(['node1: restarted', 'node2: not restarted: the server version 15.18 is not lower than 15.1', 'node3: restarted']);
    expect(ctx.warns).to.deep.equal([]);
  });

  it('--scheduled refuses members with a restart already scheduled, unless --force', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv, { members: [member(1), member(2, { scheduledRestart: { schedule: '2024-01-01T13:00:00Z' } }), member(3)] });
    const err = await failure(restart(ctx, [], { scheduled: '2024-01-01T14:00Z' }));
    expect(err.code).to.equal('already_scheduled');
    expect(err.message).to.equal('a restart is already scheduled on node2 (at 2024-01-01T13:00:00Z): cancel it with "wardenctl flush restart", or give --force to replace it');
    expect(ctx.questions).to.deep.equal([]);
    expect(ctx.rest.calls).to.deep.equal([]);
  });

  it('--any restarts one member only, picked among those selected', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv);
    ctx.rest.on('POST', 'restart', json(200, { message: 'restarted' }));
    await restart(ctx, [], { role: 'replica', any: true, force: true, random: () => 0.99 });
    expect(ctx.rest.summary()).to.deep.equal(['POST :8010/restart']);
    expect(ctx.outs).to.deep.equal(['node3: restarted']);
  });

  it('goes on after a failing member, prints why on stderr, and ends with one summary error', async () => {
    const ctx = await cluster();
    ctx.rest
      .on('POST', 'restart', json(503, { error: 'restart_failed', message: 'restart failed: the server did not start' }), apiOf(2))
      .on('POST', 'restart', 'unreachable', apiOf(3))
      .on('POST', 'restart', json(200, { message: 'ok' }));
    const err = await failure(restart(ctx, [], { force: true }));
    expect(err.message).to.equal('restart failed on 2 of 3 member(s): node2, node3');
    expect(ctx.outs).to.deep.equal(['node1: ok']);
    expect(ctx.warns[0]).to.equal('node2: HTTP 503: restart failed: the server did not start');
    expect(ctx.warns[1]).to.match(/^node3: POST http:\/\/127\.0\.0\.1:8010\/restart: connect ECONNREFUSED$/);
  });

  it('validates options before asking', async () => {
    const ctx = await cluster({ config: { pause: true } });
    const cases: [Parameters<typeof restart>[2], RegExp][] = [
      [{ dbVersion: '15' }, /--db-version must look like X.Y or X.Y.Z; got 15/],
      [{ timeout: 'soon' }, /--timeout: expected seconds or a duration/],
      [{ role: 'boss' }, /--role must be one of leader, primary, standby-leader, replica, any; got boss/],
      [{ scheduled: '2024-01-02T00:00Z' }, /cannot schedule a restart while the cluster is paused/],
    ];
    for (const [opts, msg] of cases) expect((await failure(restart(ctx, [], opts))).message).to.match(msg);
    expect((await failure(restart(ctx, ['nodeX']))).code).to.equal('member_not_found');
    expect(ctx.questions).to.deep.equal([]);
    expect(ctx.rest.calls).to.deep.equal([]);
  });
});

describe('ctl reload', () => {
  it('POSTs /reload to the chosen members after confirmation', async () => {
    const ctx = await cluster();
    ctx.answers.push(true);
    ctx.rest.on('POST', 'reload', json(202, { message: 'reload scheduled' }));
    await reload(ctx, ['node2']);
    expect(ctx.questions).to.deep.equal(['Reload the configuration of node2?']);
    expect(ctx.rest.summary()).to.deep.equal(['POST :8009/reload']);
    expect(ctx.outs).to.deep.equal(['node2: reload scheduled']);
  });

  it('aborts on no; fails on 401', async () => {
    const ctx = await cluster();
    expect((await failure(reload(ctx, []))).code).to.equal('aborted');
    ctx.rest.on('POST', 'reload', json(401, { error: 'unauthorized', message: 'authentication required' }));
    expect((await failure(reload(ctx, ['node1'], { force: true }))).message).to.equal('reload failed on 1 of 1 member(s): node1');
    expect(ctx.warns).to.deep.equal(['node1: HTTP 401: authentication required']);
  });
});

describe('ctl reinit', () => {
  it('needs member names and refuses the leader', async () => {
    const ctx = await cluster();
    expect((await failure(reinit(ctx, []))).message).to.match(/reinit needs the names/);
    expect((await failure(reinit(ctx, ['node1'], { force: true }))).message).to.equal('node1 is the leader: only replicas can be reinitialized');
    expect(ctx.rest.calls).to.deep.equal([]);
  });

  it('POSTs /reinitialize with force and from-leader', async () => {
    const ctx = await cluster();
    ctx.answers.push(true);
    ctx.rest.on('POST', 'reinitialize', json(200, { message: 'reinitialize started' }));
    await reinit(ctx, ['node2'], { fromLeader: true });
    expect(ctx.questions[0]).to.equal('Reinitialize node2? Its data directory is wiped and copied again.');
    expect(ctx.rest.calls[0]!.body).to.deep.equal({ force: false, 'from-leader': true });
    expect(ctx.outs).to.deep.equal(['node2: reinitialize started']);
  });

  it('offers to force when another action is in progress', async () => {
    const ctx = await cluster();
    ctx.answers.push(true, true);
    let n = 0;
    ctx.rest.on('POST', 'reinitialize', () => (n++ === 0 ? json(503, { error: 'action_in_progress', message: 'restart already in progress' }) : json(200, { message: 'reinitialize started' })));
    await reinit(ctx, ['node3']);
    expect(ctx.questions[1]).to.equal('node3: restart already in progress. Cancel it and reinitialize anyway?');
    expect(ctx.rest.calls.map((c) => c.body)).to.deep.equal([{ force: false, 'from-leader': false }, { force: true, 'from-leader': false }]);
  });

  it('--wait polls GET /node until the member runs a new postmaster', async () => {
    const ctx = await cluster();
    const states = [
      { state: 'running', postmaster_start_time: 'T0' },
      { state: 'running', postmaster_start_time: 'T0' },
      { state: 'creating replica' },
      { state: 'starting' },
      { state: 'running', postmaster_start_time: 'T1' },
    ];
    ctx.rest.on('GET', 'node', () => json(200, states.shift())).on('POST', 'reinitialize', json(200, { message: 'reinitialize started' }));
    await reinit(ctx, ['node2'], { wait: true, force: true });
    expect(ctx.rest.summary().filter((c) => c.startsWith('GET'))).to.have.length(5);
    expect(ctx.sleeps).to.equal(3);
    expect(ctx.outs).to.deep.equal(['node2: reinitialize started; waiting for it to complete', 'node2: reinitialize completed']);
  });

  it('--wait ends with an error when the new copy does not start, instead of waiting for ever', async () => {
    const ctx = await cluster();
    const states = [{ state: 'start failed' }, { state: 'start failed' }, { state: 'creating replica' }, { state: 'starting' }];
    ctx.rest.on('GET', 'node', () => json(200, states.shift() ?? { state: 'start failed' })).on('POST', 'reinitialize', json(200, { message: 'reinitialize started' }));
    expect((await failure(reinit(ctx, ['node2'], { wait: true, force: true }))).message).to.equal('reinitialize failed on 1 of 1 member(s): node2');
    expect(ctx.warns[0]).to.match(/^node2: the new copy of node2 does not start \(state start failed;/);
    // The state it had before the job (start failed) did not end the wait: only the one after it.
    expect(ctx.rest.summary().filter((c) => c.startsWith('GET'))).to.have.length(5);
  });

  it('--wait stops at Ctrl-C with a clear message', async () => {
    const ctx = await cluster();
    ctx.abortAfterSleeps = 2;
    ctx.rest.on('GET', 'node', 'unreachable').on('POST', 'reinitialize', json(200, { message: 'reinitialize started' }));
    expect((await failure(reinit(ctx, ['node2'], { wait: true, force: true }))).message).to.equal('reinitialize failed on 1 of 1 member(s): node2');
    expect(ctx.warns[0]).to.equal('node2: stopped waiting for node2; the reinitialization goes on in the background');
  });
});
