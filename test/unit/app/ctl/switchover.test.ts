import { expect } from 'chai';
import { failover } from '../../../../src/app/ctl/failover.js';
import { switchover } from '../../../../src/app/ctl/switchover.js';
import { failure } from './failure.js';
import { apiOf, json, makeCtx, member, seedCluster, type TestCtx } from './fixtures.js';

async function cluster(spec: Parameters<typeof seedCluster>[1] = {}): Promise<TestCtx> {
  const ctx = makeCtx();
  await seedCluster(ctx.kv, spec);
  return ctx;
}

describe('ctl switchover', () => {
  it('asks, then POSTs /switchover to the leader with leader and candidate, prints the answer and the table', async () => {
    const ctx = await cluster();
    ctx.answers.push(true);
    ctx.rest.on('POST', 'switchover', json(200, { message: 'Successfully switched over to "node2"', leader: 'node2' }));
    await switchover(ctx, { candidate: 'node2' });
    expect(ctx.questions).to.deep.equal(['Switch over cluster demo from node1 to node2 now?']);
    expect(ctx.rest.summary()).to.deep.equal(['POST :8008/switchover']);
    expect(ctx.rest.calls[0]!.body).to.deep.equal({ leader: 'node1', candidate: 'node2' });
    expect(ctx.rest.calls[0]!.opts!.timeoutMs).to.equal((2 * 10 + 30) * 1000);
    expect(ctx.outs[0]).to.equal('Successfully switched over to "node2"');
    expect(ctx.outs[1]).to.include('Cluster: demo');
  });

  it('schedules: sends scheduled_at in UTC ISO 8601 and prints the 202 message without a table', async () => {
    const ctx = await cluster();
    ctx.rest.on('POST', 'switchover', json(202, { message: 'Switchover scheduled', scheduled_at: '2024-01-01T13:00:00.000Z' }));
    await switchover(ctx, { scheduled: '2024-01-01T14:00+01:00', force: true });
    expect(ctx.questions).to.deep.equal([]);
    expect(ctx.rest.calls[0]!.body).to.deep.equal({ leader: 'node1', scheduled_at: '2024-01-01T13:00:00.000Z' });
    expect(ctx.outs).to.deep.equal(['Switchover scheduled']);
  });

  it('refuses while a switchover is scheduled, naming it; --force cancels it first, then asks nothing', async () => {
    const pending = { failover: { leader: 'node1', member: 'node3', scheduledAt: '2024-01-01T15:00:00.000Z' } };
    const ctx = await cluster(pending);
    const err = await failure(switchover(ctx, { scheduled: '2024-01-01T16:00Z' }));
    expect(err.code).to.equal('already_scheduled');
    expect(err.message).to.equal('a switchover is already scheduled at 2024-01-01T15:00:00.000Z (from node1 to node3): cancel it with "wardenctl flush switchover", or give --force to replace it');
    expect(ctx.questions).to.deep.equal([]);
    expect(ctx.rest.calls).to.deep.equal([]);
    const forced = await cluster(pending);
    forced.rest.on('DELETE', 'switchover', json(200, { message: 'scheduled switchover deleted' })).on('POST', 'switchover', json(202, { message: 'Switchover scheduled' }));
    await switchover(forced, { scheduled: '2024-01-01T16:00Z', force: true });
    expect(forced.rest.summary()).to.deep.equal(['DELETE :8008/switchover', 'POST :8008/switchover']);
    expect(forced.outs).to.deep.equal(['Cancelled the switchover scheduled at 2024-01-01T15:00:00.000Z', 'Switchover scheduled']);
  });

  it('an agent refusing a second schedule (409) is reported with what to do', async () => {
    const ctx = await cluster();
    ctx.rest.on('POST', 'switchover', json(409, { error: 'already_scheduled', message: 'a switchover is already scheduled' }));
    const err = await failure(switchover(ctx, { scheduled: '2024-01-01T16:00Z', force: true }));
    expect(err.code).to.equal('already_scheduled');
    expect(err.message).to.match(/^switchover on node1 refused: a switchover is already scheduled \(cancel it with/);
  });

  it('falls back to another member when the leader\'s API does not answer', async () => {
    const ctx = await cluster();
    ctx.rest.on('POST', 'switchover', 'unreachable', apiOf(1)).on('POST', 'switchover', json(200, { message: 'ok' }));
    await switchover(ctx, { candidate: 'node3', force: true });
    expect(ctx.rest.summary()).to.deep.equal(['POST :8008/switchover', 'POST :8010/switchover']);
  });

  it('refuses without asking: no leader, wrong --leader, unknown or leader candidate, past or bad time, paused cases', async () => {
    const cases: [Parameters<typeof seedCluster>[1], Parameters<typeof switchover>[1], RegExp][] = [
      [{ leader: null }, {}, /^the cluster has no leader$/],
      [{}, { leader: 'node2' }, /^node2 is not the leader of cluster demo \(the leader is node1\)$/],
      [{}, { candidate: 'node9' }, /^member node9 is not in the cluster \(members: node1, node2, node3\)$/],
      [{}, { candidate: 'node1' }, /^node1 is already the leader$/],
      [{}, { scheduled: '2023-12-31T00:00Z' }, /is in the past/],
      [{}, { scheduled: 'tomorrow-ish' }, /cannot parse "tomorrow-ish"/],
      [{ config: { pause: true } }, { candidate: 'node2', scheduled: '2024-02-01T00:00Z' }, /cannot schedule a switchover while the cluster is paused/],
      [{ config: { pause: true } }, {}, /the cluster is paused: a switchover needs --candidate/],
    ];
    for (const [spec, opts, msg] of cases) {
      const ctx = await cluster(spec);
      expect((await failure(switchover(ctx, opts))).message).to.match(msg);
      expect(ctx.rest.calls).to.deep.equal([]);
      expect(ctx.questions).to.deep.equal([]);
    }
  });

  it('aborts when the user says no, sending nothing', async () => {
    const ctx = await cluster();
    ctx.answers.push(false);
    const err = await failure(switchover(ctx, { candidate: 'node2' }));
    expect(err.code).to.equal('aborted');
    expect(ctx.rest.calls).to.deep.equal([]);
  });

  it('reports the API refusal as one line with member, status and message', async () => {
    const ctx = await cluster();
    ctx.rest.on('POST', 'switchover', json(412, { error: 'candidate_not_healthy', message: 'candidate node2 is not eligible: lag 20MB' }));
    const err = await failure(switchover(ctx, { candidate: 'node2', force: true }));
    expect(err.message).to.equal('switchover on node1 failed: HTTP 412: candidate node2 is not eligible: lag 20MB');
  });

  it('fails clearly when no member API answers', async () => {
    const ctx = await cluster();
    ctx.rest.on('POST', 'switchover', 'unreachable');
    const err = await failure(switchover(ctx, { force: true }));
    expect(err.code).to.equal('api_unreachable');
    expect(err.message).to.match(/^no member's API answered: node1 \(.*\); node2 \(.*\); node3 \(.*\)$/);
  });
});

describe('ctl failover', () => {
  it('needs --candidate', async () => {
    const ctx = await cluster();
    expect((await failure(failover(ctx, {}))).message).to.match(/failover needs --candidate NAME/);
  });

  it('--leader (or --primary) makes it a switchover: checked against the leader, sent in the body', async () => {
    const ctx = await cluster();
    ctx.answers.push(true);
    ctx.rest.on('POST', 'failover', json(200, { message: 'Successfully switched over to "node2"', leader: 'node2' }));
    await failover(ctx, { candidate: 'node2', leader: 'node1' });
    expect(ctx.questions).to.deep.equal(['Switch over cluster demo from node1 to node2 now?']);
    expect(ctx.rest.calls[0]!.body).to.deep.equal({ candidate: 'node2', leader: 'node1' });
    expect((await failure(failover(ctx, { candidate: 'node2', leader: 'node3', force: true }))).message).to.equal('node3 is not the leader of cluster demo (the leader is node1)');
  });

  it('works without a leader: POSTs /failover to the candidate first', async () => {
    const ctx = await cluster({ leader: null });
    ctx.answers.push(true);
    ctx.rest.on('POST', 'failover', json(200, { message: 'Successfully failed over to "node3"', leader: 'node3' }));
    await failover(ctx, { candidate: 'node3' });
    expect(ctx.questions[0]).to.equal('Fail over cluster demo to node3? A failover can lose recent writes.');
    expect(ctx.rest.summary()).to.deep.equal(['POST :8010/failover']);
    expect(ctx.rest.calls[0]!.body).to.deep.equal({ candidate: 'node3' });
    expect(ctx.outs[0]).to.equal('Successfully failed over to "node3"');
  });

  it('a dry run that would be refused says why in words, then every member', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv);
    ctx.rest.on(
      'POST',
      'switchover',
      json(412, {
        error: 'no_eligible_candidate',
        message: 'switchover is not possible: no good candidates have been found (node2: tagged nofailover; node3: tagged nofailover)',
        members: [
          { name: 'node2', eligible: false, reasons: [{ detail: 'tagged nofailover' }] },
          { name: 'node3', eligible: false, reasons: [{ detail: 'tagged nofailover' }] },
        ],
      }),
    );
    const err = await failure(switchover(ctx, { dryRun: true, force: true }));
    expect(err.message.split('\n')).to.deep.equal([
      'switchover is not possible: no good candidates have been found (dry run: nothing was changed)',
      '  node2        tagged nofailover',
      '  node3        tagged nofailover',
    ]);
  });

  it('names how far behind a lagging candidate is: what a failover to it loses (question and dry run)', async () => {
    const ctx = await cluster({ leader: null, members: [member(1, { state: 'stopped' }), member(2), member(3, { receiveLsn: 0x3000000, replayLsn: 0x3000000 })] });
    ctx.answers.push(false);
    expect((await failure(failover(ctx, { candidate: 'node3' }))).code).to.equal('aborted');
    expect(ctx.questions[0]).to.equal('Fail over cluster demo to node3? node3 is 16777312 bytes behind the last known primary position: writes it has not received are lost.');
    ctx.rest.on('POST', 'failover', json(200, { message: 'node3 would be promoted', dry_run: true, candidate: 'node3', members: [{ name: 'node3', eligible: true, reasons: [], lag_bytes: 16777312 }] }));
    await failover(ctx, { candidate: 'node3', dryRun: true });
    expect(ctx.outs).to.include('  node3        eligible (16777312 bytes behind the last known primary position)');
  });

  it('in synchronous mode, warns that an asynchronous candidate may miss commits the synchronous standby acknowledged', async () => {
    const ctx = await cluster({ leader: null, config: { ttl: 30, loop_wait: 10, synchronous_mode: true }, sync: { leader: 'node1', syncStandby: ['node2'] } });
    ctx.answers.push(false, false);
    expect((await failure(failover(ctx, { candidate: 'node3' }))).code).to.equal('aborted');
    expect(ctx.questions[0]).to.equal('Fail over cluster demo to node3? node3 is an asynchronous node: commits acknowledged by the synchronous standby (node2) may be missing on it. A failover can lose recent writes.');
    expect((await failure(failover(ctx, { candidate: 'node2' }))).code).to.equal('aborted');
    expect(ctx.questions[1]).to.equal('Fail over cluster demo to node2? A failover can lose recent writes.');
  });

  it('warns that a switchover is the normal choice when there is a leader; refuses the leader as candidate', async () => {
    const ctx = await cluster();
    ctx.answers.push(false);
    expect((await failure(failover(ctx, { candidate: 'node2' }))).code).to.equal('aborted');
    expect(ctx.questions[0]).to.include('The cluster has a healthy leader (node1): switchover is the normal choice.');
    expect((await failure(failover(ctx, { candidate: 'node1', force: true }))).message).to.equal('node1 is already the leader');
    expect((await failure(failover(ctx, { candidate: 'nodeX', force: true }))).code).to.equal('member_not_found');
  });

  it('reports a 503 as a failure', async () => {
    const ctx = await cluster({ leader: null, members: [member(1), member(2)] });
    ctx.rest.on('POST', 'failover', json(503, { error: 'failover_failed', message: 'failover failed or its outcome is unknown' }));
    expect((await failure(failover(ctx, { candidate: 'node2', force: true }))).message).to.equal('failover on node2 failed: HTTP 503: failover failed or its outcome is unknown');
  });
});
