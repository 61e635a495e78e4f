import { expect } from 'chai';
import { parseCluster } from '../../../../src/adapters/cluster-store/codec.js';
import { memberToJson } from '../../../../src/adapters/cluster-store/codec.js';
import { ClusterKey } from '../../../../src/adapters/cluster-store/keys.js';
import { demoteClusterCommand, promoteClusterCommand } from '../../../../src/app/ctl/cluster-role.js';
import { runCli } from '../../../../src/app/ctl/main.js';
import type { Member } from '../../../../src/domain/cluster/model/cluster.js';
import { failure } from './failure.js';
import { makeCtx, member, seedCluster, type TestCtx } from './fixtures.js';

const STANDBY = { ttl: 30, loop_wait: 10, standby_cluster: { host: 'dc1', port: 5432 } };

/** Rewrites node1's member record after the first wait, as its agent would once it has changed roles. */
function roleChangesTo(ctx: TestCtx, role: string, timeline = 2): void {
  const sleep = ctx.sleep.bind(ctx);
  ctx.sleep = async (ms: number) => {
    const { name, ...rest } = member(1, { role, timeline });
    await ctx.kv.put(ClusterKey.member(name), memberToJson(rest as Omit<Member, 'name' | 'revision'>));
    return sleep(ms);
  };
}

async function stored(ctx: TestCtx): Promise<Record<string, unknown> | undefined> {
  return parseCluster(await ctx.kv.readAll()).cluster.config?.value as Record<string, unknown> | undefined;
}

describe('ctl promote-cluster / demote-cluster', () => {
  it('promote-cluster: asks, removes standby_cluster, waits for the leader to run as primary', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv, { config: STANDBY, members: [member(1, { role: 'standby_leader' }), member(2)] });
    ctx.answers.push(true);
    roleChangesTo(ctx, 'primary');
    await promoteClusterCommand(ctx);
    expect(ctx.questions).to.deep.equal(['Promote cluster demo? Its standby leader node1 stops following the remote primary and becomes a writable primary']);
    expect(await stored(ctx)).to.deep.equal({ ttl: 30, loop_wait: 10 });
    expect(ctx.outs).to.deep.equal(['Success: standby_cluster removed; node1 promotes', 'Cluster demo is a primary cluster: node1 is the primary (timeline 2)']);
  });

  it('promote-cluster: a primary cluster, no leader, a "no" answer, a wait that runs out', async () => {
    const primary = makeCtx();
    await seedCluster(primary.kv);
    expect((await failure(promoteClusterCommand(primary, { force: true }))).message).to.equal('cluster demo is not a standby cluster: nothing to promote');
    const leaderless = makeCtx();
    await seedCluster(leaderless.kv, { config: STANDBY, leader: null });
    expect((await failure(promoteClusterCommand(leaderless, { force: true }))).message).to.equal('cluster demo has no standby leader to promote');
    const declined = makeCtx();
    await seedCluster(declined.kv, { config: STANDBY });
    await failure(promoteClusterCommand(declined));
    expect(await stored(declined)).to.deep.equal(STANDBY);
    const slow = makeCtx();
    await seedCluster(slow.kv, { config: STANDBY, members: [member(1, { role: 'standby_leader' })] });
    expect((await failure(promoteClusterCommand(slow, { force: true }))).message).to.match(/^the change is written, but after 120 s node1 is standby_leader, running; follow it with wardenctl list$/);
  });

  it('promote-cluster --no-wait returns once written', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv, { config: STANDBY });
    await promoteClusterCommand(ctx, { force: true, noWait: true });
    expect(ctx.outs).to.deep.equal(['Success: standby_cluster removed; node1 promotes']);
    expect(ctx.sleeps).to.equal(0);
  });

  it('demote-cluster: sets standby_cluster from the options, waits for the standby leader', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv);
    roleChangesTo(ctx, 'standby_leader', 3);
    await demoteClusterCommand(ctx, { host: 'dc2', port: '5433', primarySlotName: 'dc1', recoveryMinApplyDelay: '5min', createReplicaMethods: 'pgbackrest, basebackup', force: true });
    expect(await stored(ctx)).to.deep.equal({
      ttl: 30,
      loop_wait: 10,
      standby_cluster: { host: 'dc2', port: 5433, primary_slot_name: 'dc1', recovery_min_apply_delay: '5min', create_replica_methods: ['pgbackrest', 'basebackup'] },
    });
    expect(ctx.outs).to.deep.equal(['Success: cluster demo is set to replicate from dc2:5433; node1 becomes the standby leader', 'Cluster demo is a standby cluster: node1 is the standby leader (timeline 3)']);
  });

  it('demote-cluster: needs a host or a restore_command, refuses a standby cluster and an invalid setting', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv);
    expect((await failure(demoteClusterCommand(ctx, { force: true }))).message).to.match(/needs --host .* or --restore-command/);
    expect((await failure(demoteClusterCommand(ctx, { host: 'h', port: 'x', force: true }))).message).to.match(/^invalid standby_cluster, nothing written: standby_cluster\.port: expected an integer/);
    const standby = makeCtx();
    await seedCluster(standby.kv, { config: STANDBY });
    expect((await failure(demoteClusterCommand(standby, { host: 'h', force: true }))).message).to.equal('cluster demo is already a standby cluster');
  });

  it('the commands are wired in the CLI with their options', async () => {
    const outs: string[] = [];
    const errs: string[] = [];
    const ctx = makeCtx();
    await seedCluster(ctx.kv, { config: STANDBY });
    const code = await runCli(['node', 'wardenctl', '--scope', 'demo', 'promote-cluster', '--force', '--no-wait'], {
      stdout: (s) => outs.push(s),
      stderr: (s) => errs.push(s),
      env: {},
      makeStore: () => ctx.store,
      makeRest: () => ctx.rest,
      prompter: { ask: async () => '', confirm: async () => false, close: () => undefined },
      signal: new AbortController().signal,
    });
    expect(errs).to.deep.equal([]);
    expect(code).to.equal(0);
    expect(outs).to.deep.equal(['Success: standby_cluster removed; node1 promotes']);
    const help: string[] = [];
    await runCli(['node', 'wardenctl', 'demote-cluster', '--help'], { stdout: (s) => help.push(s), stderr: (s) => help.push(s), env: {}, makeStore: () => ctx.store, makeRest: () => ctx.rest, prompter: { ask: async () => '', confirm: async () => false, close: () => undefined }, signal: new AbortController().signal });
    for (const flag of ['--host', '--port', '--primary-slot-name', '--restore-command', '--archive-cleanup-command', '--recovery-min-apply-delay', '--create-replica-methods', '--force', '--no-wait']) expect(help.join('\n')).to.include(flag);
  });
});
