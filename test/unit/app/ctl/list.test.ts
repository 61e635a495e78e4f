import { expect } from 'chai';
import YAML from 'yaml';
import { ClusterKey } from '../../../../src/adapters/cluster-store/keys.js';
import { list } from '../../../../src/app/ctl/list.js';
import { topology } from '../../../../src/app/ctl/topology.js';
import { topologyOrder } from '../../../../src/app/ctl/cluster-table.js';
import { parseCluster } from '../../../../src/adapters/cluster-store/codec.js';
import { makeCtx, member, seedCluster } from './fixtures.js';

describe('ctl list', () => {
  it('pretty: title with the system id, one row per member, leader lag blank, replicas show streaming and byte lags', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv);
    await list(ctx);
    expect(ctx.text()).to.equal(
      [
        '+ Cluster: demo (7300000000000000001) -----------+----+-------------+-----+------------+-----+',
        '| Member | Host            | Role    | State     | TL | Receive LSN | Lag | Replay LSN | Lag |',
        '+--------+-----------------+---------+-----------+----+-------------+-----+------------+-----+',
        '| node1  | 127.0.0.1:15432 | Leader  | running   |  1 |             |     |            |     |',
        '| node2  | 127.0.0.1:15433 | Replica | streaming |  1 |   0/4000060 |   0 |  0/4000000 |  96 |',
        '| node3  | 127.0.0.1:15434 | Replica | streaming |  1 |   0/4000060 |   0 |  0/4000000 |  96 |',
        '+--------+-----------------+---------+-----------+----+-------------+-----+------------+-----+',
      ].join('\n'),
    );
  });

  it('footers: maintenance mode and a scheduled switchover; roles: sync standby', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv, {
      config: { pause: true },
      sync: { leader: 'node1', syncStandby: ['node2'] },
      failover: { leader: 'node1', member: 'node3', scheduledAt: '2024-01-01T13:00:00.000Z' },
    });
    await list(ctx);
    const lines = ctx.text().split('\n');
    expect(lines.slice(-4)).to.deep.equal([
      ' Maintenance mode: on',
      ' Switchover scheduled at: 2024-01-01T13:00:00.000Z',
      '                    from: node1',
      '                      to: node3',
    ]);
    expect(lines.find((l) => l.includes('node2'))).to.include('Sync Standby');
  });

  it('quorum standbys, a standby leader, and unknown positions', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv, {
      config: { synchronous_mode: 'quorum' },
      sync: { leader: 'node1', syncStandby: ['node2', 'node3'], quorum: 1 },
      members: [member(1, { role: 'standby_leader' }), member(2), member(3, { receiveLsn: null, replayLsn: null, state: 'starting', replicationState: null })],
    });
    await list(ctx, { format: 'json' });
    const rows = JSON.parse(ctx.text()) as Record<string, unknown>[];
    expect(rows.map((r) => r['Role'])).to.deep.equal(['Standby Leader', 'Quorum Standby', 'Quorum Standby']);
    expect(rows[2]).to.include({ State: 'starting', 'Receive Lag': 'unknown', 'Replay Lag': 'unknown', 'Receive LSN': null });
  });

  it('json, yaml and tsv carry the same rows, keyed with the cluster name and both lags named apart', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv);
    await list(ctx, { format: 'json' });
    await list(ctx, { format: 'yaml' });
    await list(ctx, { format: 'tsv' });
    const [json, yaml, tsv] = ctx.outs;
    const rows = JSON.parse(json!) as Record<string, unknown>[];
    const none = { 'Pending restart': false, 'Pending restart reason': null, 'Scheduled restart': null, Tags: {} };
    expect(rows[1]).to.deep.equal({
      Cluster: 'demo', Member: 'node2', Host: '127.0.0.1:15433', Role: 'Replica', State: 'streaming', TL: 1,
      'Receive LSN': '0/4000060', 'Receive Lag': 0, 'Replay LSN': '0/4000000', 'Replay Lag': 96, ...none,
    });
    expect(rows[0]).to.deep.equal({
      Cluster: 'demo', Member: 'node1', Host: '127.0.0.1:15432', Role: 'Leader', State: 'running', TL: 1,
      'Receive LSN': null, 'Receive Lag': null, 'Replay LSN': null, 'Replay Lag': null, ...none,
    });
    expect(YAML.parse(yaml!)).to.deep.equal(rows);
    const tsvLines = tsv!.split('\n');
    expect(tsvLines[0]).to.equal('Cluster\tMember\tHost\tRole\tState\tTL\tReceive LSN\tReceive Lag\tReplay LSN\tReplay Lag\tPending restart\tPending restart reason\tScheduled restart\tTags');
    expect(tsvLines[2]).to.equal('demo\tnode2\t127.0.0.1:15433\tReplica\tstreaming\t1\t0/4000060\t0\t0/4000000\t96\tfalse\t\t\t{}');
  });

  it('shows pending restart, scheduled restart and tags columns when a member has them (always with --extended)', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv, {
      members: [
        member(1),
        member(2, { pendingRestart: true, pendingRestartReason: { max_connections: { old_value: '100', new_value: '200' } } as never }),
        member(3, { tags: { nofailover: true }, scheduledRestart: { schedule: '2024-01-02T00:00:00Z', restart_pending: true } }),
      ],
    });
    await list(ctx, { format: 'json' });
    const rows = JSON.parse(ctx.outs[0]!) as Record<string, unknown>[];
    expect(rows[1]).to.deep.include({ 'Pending restart': true, 'Pending restart reason': { max_connections: { old_value: '100', new_value: '200' } } });
    expect(rows[2]).to.deep.include({ 'Scheduled restart': { schedule: '2024-01-02T00:00:00Z', restart_pending: true }, Tags: { nofailover: true } });
    await list(ctx);
    const pretty = ctx.outs[1]!.split('\n');
    expect(pretty[1]).to.include('| Pending restart | Pending restart reason    | Scheduled restart');
    expect(pretty.find((l) => l.includes('node2'))).to.include('| *               | max_connections: 100->200 |');
    expect(pretty.find((l) => l.includes('node3'))).to.include('2024-01-02T00:00:00Z (if pending) | nofailover: true |');

    const plain = makeCtx();
    await seedCluster(plain.kv);
    await list(plain, { extended: true });
    expect(plain.text().split('\n')[1]).to.match(/\| Pending restart \| Pending restart reason \| Scheduled restart \| Tags \|$/);
  });

  it('an uninitialized, empty cluster gives an empty table', async () => {
    const ctx = makeCtx();
    await list(ctx);
    expect(ctx.text().split('\n')[0]).to.match(/^\+ Cluster: demo \(uninitialized\) -+\+/);
    expect(ctx.text().split('\n')).to.have.length(3);
  });

  it('warns about a malformed member key and lists the rest', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv);
    await ctx.kv.put(ClusterKey.member('node9'), 'not json');
    await list(ctx, { format: 'json' });
    expect(JSON.parse(ctx.text())).to.have.length(3);
    expect(ctx.warns[0]).to.match(/^warning: ignoring a malformed DCS key \(path: members\/node9, problem: not valid JSON/);
  });

  it('-w repeats with a timestamp until interrupted, reading the DCS each time', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv);
    ctx.abortAfterSleeps = 3;
    let reads = 0;
    const read = ctx.store.read.bind(ctx.store);
    ctx.store.read = (opts) => (reads++, read(opts));
    await list(ctx, { watch: '1.5' });
    expect(ctx.outs).to.have.length(3);
    expect(reads).to.equal(3);
    expect(ctx.outs[0]!.split('\n')[0]).to.equal('2024-01-01T12:00:00.000Z');
    expect(ctx.outs[1]!.split('\n')[0]).to.equal('2024-01-01T12:00:01.500Z');
  });

  it('-w on a terminal redraws the screen in place instead of appending tables', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv);
    ctx.abortAfterSleeps = 2;
    const screens: string[] = [];
    ctx.redraw = (s) => screens.push(s);
    await list(ctx, { watch: 1 });
    expect(ctx.outs).to.deep.equal([]);
    expect(screens).to.have.length(2);
    expect(screens[1]!.split('\n')[0]).to.equal('2024-01-01T12:00:01.000Z');
  });

  it('-t prints the time of the reading above a single table', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv);
    await list(ctx, { timestamp: true, format: 'tsv' });
    expect(ctx.text().split('\n')[0]).to.equal('2024-01-01T12:00:00.000Z');
    expect(ctx.text().split('\n')[1]).to.match(/^Cluster\tMember/);
  });

  it('rejects a bad --format or --watch before reading anything', async () => {
    const ctx = makeCtx();
    for (const [opts, msg] of [[{ format: 'xml' }, /--format must be one of/], [{ watch: '0' }, /--watch needs a positive number of seconds; got 0/], [{ watch: 'x' }, /got x/]] as const) {
      let err: Error | null = null;
      await list(ctx, opts).catch((e: Error) => (err = e));
      expect(err!.message).to.match(msg);
    }
  });

  it('fails with a DcsUnavailableError when the DCS does not answer', async () => {
    const ctx = makeCtx();
    ctx.space.setReachable(false);
    let err: (Error & { code?: string }) | null = null;
    await list(ctx).catch((e: Error) => (err = e));
    expect(err!.code).to.equal('dcs_unavailable');
  });
});

describe('ctl topology', () => {
  it('puts replicas under the leader, cascading ones under their replicatefrom member', async () => {
    const ctx = makeCtx();
    await seedCluster(ctx.kv, {
      leader: 'node2',
      members: [member(1, { role: 'replica', xlogLocation: null, receiveLsn: 1, replayLsn: 1, replicationState: 'streaming', tags: { replicatefrom: 'node3' } }), member(2, { role: 'primary', xlogLocation: 5, receiveLsn: null, replayLsn: null, replicationState: null }), member(3), member(4, { tags: { replicatefrom: 'node1' } })],
    });
    await topology(ctx, { format: 'json' });
    await topology(ctx);
    const rows = JSON.parse(ctx.outs[0]!) as { Member: string; Upstream: string | null; Depth: number }[];
    expect(rows.map((r) => [r.Member, r.Upstream, r.Depth])).to.deep.equal([['node2', null, 0], ['node3', 'node2', 1], ['node1', 'node3', 2], ['node4', 'node1', 3]]);
    expect(ctx.outs[1]!.split('\n').slice(3, 7).map((l) => l.split('|')[1]!.trimEnd())).to.deep.equal([' node2', ' + node3', '   + node1', '     + node4']);
  });

  it('keeps members of a replicatefrom cycle and members of a leaderless cluster', async () => {
    const ctx = makeCtx();
    const replica = { role: 'replica', xlogLocation: null, receiveLsn: 1, replayLsn: 1, replicationState: 'streaming' };
    await seedCluster(ctx.kv, { leader: null, members: [member(1, { ...replica, tags: { replicatefrom: 'node2' } }), member(2, { tags: { replicatefrom: 'node1' } }), member(3)] });
    const { cluster } = parseCluster(await ctx.kv.readAll());
    // A cycle streams from nobody in it: both follow the leader (none here), as the agents do.
    expect(topologyOrder(cluster).map((x) => `${x.depth}:${x.member.name}`)).to.deep.equal(['0:node1', '0:node2', '0:node3']);
    // A member named in replicatefrom that does not run as a replica is not followed either.
    await seedCluster(ctx.kv, { leader: 'node3', members: [member(1, { ...replica, tags: { replicatefrom: 'node2' } }), member(2, { ...replica, state: 'stopped' }), member(3, { role: 'primary' })] });
    const second = parseCluster(await ctx.kv.readAll()).cluster;
    expect(topologyOrder(second).map((x) => `${x.depth}:${x.member.name}:${x.upstream}`)).to.deep.equal(['0:node3:null', '1:node1:node3', '1:node2:node3']);
  });
});
