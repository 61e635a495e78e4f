import { expect } from 'chai';
import { parseCluster } from '../../../../src/adapters/cluster-store/codec.js';
import { flush } from '../../../../src/app/ctl/flush.js';
import { setPause } from '../../../../src/app/ctl/pause.js';
import { failure } from './failure.js';
import { apiOf, json, makeCtx, member, seedCluster, type TestCtx } from './fixtures.js';

async function cluster(spec: Parameters<typeof seedCluster>[1] = {}): Promise<TestCtx> {
  const ctx = makeCtx();
  await seedCluster(ctx.kv, spec);
  return ctx;
}

const scheduled = { leader: 'node1', member: 'node2', scheduledAt: '2024-01-01T13:00:00.000Z' };

describe('ctl flush', () => {
  it('restart: DELETE /restart only on members with a scheduled restart', async () => {
    const ctx = await cluster({ members: [member(1), member(2, { scheduledRestart: { schedule: '2024-01-01T13:00:00Z' } }), member(3, { scheduledRestart: { schedule: '2024-01-01T14:00:00Z' } })] });
    ctx.answers.push(true);
    ctx.rest.on('DELETE', 'restart', json(200, { message: 'scheduled restart deleted' })).on('DELETE', 'restart', json(404, { error: 'not_found', message: 'no restart scheduled' }), apiOf(3));
    await flush(ctx, 'restart', []);
    expect(ctx.questions).to.deep.equal(['Cancel the scheduled restart of node2, node3?']);
    expect(ctx.rest.summary()).to.deep.equal(['DELETE :8009/restart', 'DELETE :8010/restart']);
    expect(ctx.outs).to.deep.equal(['node2: scheduled restart deleted', 'node3: no restart was scheduled']);
  });

  it('restart: nothing scheduled is said, not an error', async () => {
    const ctx = await cluster();
    await flush(ctx, 'restart', []);
    expect(ctx.outs).to.deep.equal(['No scheduled restart: nothing to cancel']);
  });

  it('switchover: DELETE /switchover on the leader', async () => {
    const ctx = await cluster({ failover: scheduled });
    ctx.rest.on('DELETE', 'switchover', json(200, { message: 'scheduled switchover deleted' }));
    await flush(ctx, 'switchover', [], { force: true });
    expect(ctx.rest.summary()).to.deep.equal(['DELETE :8008/switchover']);
    expect(ctx.outs).to.deep.equal(['scheduled switchover deleted']);
  });

  it('switchover: without any API answering, cancels in the DCS with a compare-and-set', async () => {
    const ctx = await cluster({ failover: scheduled });
    ctx.rest.on('DELETE', 'switchover', 'unreachable');
    await flush(ctx, 'switchover', [], { force: true });
    expect(ctx.outs).to.deep.equal(['No API answered; cancelled the scheduled switchover in the DCS']);
    expect(parseCluster(await ctx.kv.readAll()).cluster.failover).to.equal(null);
  });

  it('switchover: an API refusal is reported, not bypassed', async () => {
    const ctx = await cluster({ failover: scheduled });
    ctx.rest.on('DELETE', 'switchover', json(401, { error: 'unauthorized', message: 'authentication required' }));
    expect((await failure(flush(ctx, 'switchover', [], { force: true }))).message).to.equal('flush switchover on node1 failed: HTTP 401: authentication required');
    expect(parseCluster(await ctx.kv.readAll()).cluster.failover).not.to.equal(null);
  });

  it('switchover: nothing scheduled; bad target', async () => {
    const ctx = await cluster();
    await flush(ctx, 'switchover', []);
    expect(ctx.outs).to.deep.equal(['No scheduled switchover: nothing to cancel']);
    expect((await failure(flush(ctx, 'everything', []))).message).to.equal('flush: expected restart or switchover; got everything');
  });
});

describe('ctl pause / resume', () => {
  it('pause PATCHes /config {pause: true} on the leader', async () => {
    const ctx = await cluster();
    ctx.rest.on('PATCH', 'config', json(200, { pause: true }));
    await setPause(ctx, true);
    expect(ctx.rest.summary()).to.deep.equal(['PATCH :8008/config']);
    expect(ctx.rest.calls[0]!.body).to.deep.equal({ pause: true });
    expect(ctx.outs).to.deep.equal(['Success: cluster management is paused']);
  });

  it('resume PATCHes {pause: null}; refuses when already in the wanted state', async () => {
    const ctx = await cluster({ config: { pause: true } });
    ctx.rest.on('PATCH', 'config', json(200, {}));
    await setPause(ctx, false);
    expect(ctx.rest.calls[0]!.body).to.deep.equal({ pause: null });
    expect((await failure(setPause(ctx, true))).message).to.equal('the cluster is already paused');
    const running = await cluster();
    expect((await failure(setPause(running, false))).message).to.equal('the cluster is not paused');
  });

  it('--wait polls every member\'s GET /node until all report pause', async () => {
    const ctx = await cluster();
    let round = 0;
    ctx.rest.on('PATCH', 'config', json(200, {}));
    ctx.rest.on('GET', 'node', (call) => json(200, call.apiUrl === apiOf(3) && round++ < 2 ? { state: 'running' } : { state: 'running', pause: true }));
    await setPause(ctx, true, { wait: true });
    expect(ctx.sleeps).to.equal(2);
    expect(ctx.outs.at(-1)).to.equal('Every member reports that it is paused');
  });

  it('--wait gives up after the limit naming the members that did not confirm', async () => {
    const ctx = await cluster();
    ctx.rest.on('PATCH', 'config', json(200, {}));
    ctx.rest.on('GET', 'node', 'unreachable', apiOf(2)).on('GET', 'node', json(200, { state: 'running', pause: true }));
    const err = await failure(setPause(ctx, true, { wait: true }));
    expect(err.message).to.equal('pause is not confirmed by node2 (no answer) after 50s');
  });

  it('reports a refused PATCH', async () => {
    const ctx = await cluster();
    ctx.rest.on('PATCH', 'config', json(409, { error: 'conflict', message: 'config changed concurrently' }));
    expect((await failure(setPause(ctx, true))).message).to.equal('pause on node1 failed: HTTP 409: config changed concurrently');
  });
});
