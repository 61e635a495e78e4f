import YAML from 'yaml';
import { expect } from 'chai';
import { dsn } from '../../../../src/app/ctl/dsn.js';
import { history } from '../../../../src/app/ctl/history.js';
import { query } from '../../../../src/app/ctl/query.js';
import { remove } from '../../../../src/app/ctl/remove.js';
import { formatServerVersion, version } from '../../../../src/app/ctl/version.js';
import { CtlError } from '../../../../src/app/ctl/errors.js';
import { connectionString } from '../../../../src/app/ctl/pg-query.js';
import { failure } from './failure.js';
import { apiOf, json, makeCtx, member, seedCluster, type TestCtx } from './fixtures.js';

async function cluster(spec: Parameters<typeof seedCluster>[1] = {}): Promise<TestCtx> {
  const ctx = makeCtx();
  await seedCluster(ctx.kv, spec);
  return ctx;
}

describe('ctl history', () => {
  const lines = [
    [1, 0x3000000, 'no recovery target specified', '2024-01-01T10:00:00+00:00', 'node2'],
    [2, 0x5000060, 'no recovery target specified', '2024-01-01T11:00:00+00:00', 'node1'],
  ] as const;

  it('renders the DCS history key as a table in every format (LSN in PostgreSQL notation for people, in bytes for scripts)', async () => {
    const ctx = await cluster({ history: lines });
    await history(ctx);
    await history(ctx, { format: 'json' });
    expect(ctx.outs[0]!.split('\n').slice(0, 4)).to.deep.equal([
      '+----+-----------+------------------------------+---------------------------+------------+',
      '| TL |       LSN | Reason                       | Timestamp                 | New Leader |',
      '+----+-----------+------------------------------+---------------------------+------------+',
      '|  1 | 0/3000000 | no recovery target specified | 2024-01-01T10:00:00+00:00 | node2      |',
    ]);
    expect(JSON.parse(ctx.outs[1]!)[1]).to.deep.equal({ TL: 2, LSN: 0x5000060, Reason: 'no recovery target specified', Timestamp: '2024-01-01T11:00:00+00:00', 'New Leader': 'node1' });
    expect(ctx.rest.calls).to.deep.equal([]);
  });

  it('asks the leader\'s GET /history when the DCS has no history key', async () => {
    const ctx = await cluster();
    ctx.rest.on('GET', 'history', json(200, [[1, 100, 'reason', null, null]]));
    await history(ctx, { format: 'tsv' });
    expect(ctx.rest.summary()).to.deep.equal(['GET :8008/history']);
    expect(ctx.text()).to.equal('TL\tLSN\tReason\tTimestamp\tNew Leader\n1\t100\treason\t\t');
    ctx.rest.on('GET', 'history', json(200, { not: 'a list' }));
    expect((await failure(history(ctx))).message).to.equal('GET /history did not return a list');
  });
});

describe('ctl dsn', () => {
  it('prints host and port of the leader, a named member, or the first member with a role', async () => {
    const ctx = await cluster();
    await dsn(ctx, undefined);
    await dsn(ctx, 'node3');
    await dsn(ctx, undefined, { role: 'replica' });
    expect(ctx.outs).to.deep.equal(['host=127.0.0.1 port=15432', 'host=127.0.0.1 port=15434', 'host=127.0.0.1 port=15433']);
  });

  it('errors: no leader, unknown member, both a name and a role, unusable conn_url', async () => {
    expect((await failure(dsn(await cluster({ leader: null }), undefined))).message).to.equal('the cluster has no leader');
    const ctx = await cluster({ members: [member(1), member(2, { connUrl: '' })] });
    expect((await failure(dsn(ctx, 'node7'))).code).to.equal('member_not_found');
    expect((await failure(dsn(ctx, 'node1', { role: 'leader' }))).message).to.equal('give a member name or --role, not both');
    expect((await failure(dsn(ctx, 'node2'))).message).to.equal('member node2 publishes no usable conn_url ("")');
  });
});

describe('ctl query', () => {
  it('runs the SQL on the leader\'s conn_url with the given login and prints a table', async () => {
    const ctx = await cluster();
    ctx.sqlResult = { columns: ['n', 'n', 'at'], rows: [[1, 'x', new Date(Date.UTC(2024, 0, 1))], [2, null, null]] };
    await query(ctx, { command: 'select 1', user: 'postgres', password: 'pw', format: 'json' });
    expect(ctx.sqlCalls).to.deep.equal([{ target: { connUrl: 'postgres://127.0.0.1:15432/postgres', user: 'postgres', password: 'pw' }, sql: 'select 1' }]);
    expect(JSON.parse(ctx.text())).to.deep.equal([{ n: 1, n_2: 'x', at: '2024-01-01T00:00:00.000Z' }, { n: 2, n_2: null, at: null }]);
  });

  it('json and yaml keep NULLs, arrays and json values as they are; tsv takes --delimiter; pretty shows booleans', async () => {
    const ctx = await cluster();
    ctx.sqlResult = { columns: ['a', 'j', 'b', 'z'], rows: [[[1, null, 3], { k: [true] }, false, null]] };
    await query(ctx, { command: 'x', format: 'json' });
    await query(ctx, { command: 'x', format: 'yaml' });
    await query(ctx, { command: 'x', format: 'tsv', delimiter: '|' });
    await query(ctx, { command: 'x' });
    expect(JSON.parse(ctx.outs[0]!)).to.deep.equal([{ a: [1, null, 3], j: { k: [true] }, b: false, z: null }]);
    expect(YAML.parse(ctx.outs[1]!)).to.deep.equal([{ a: [1, null, 3], j: { k: [true] }, b: false, z: null }]);
    expect(ctx.outs[2]!.split('\n')).to.deep.equal(['a|j|b|z', '[1,null,3]|{"k":[true]}|false|']);
    expect(ctx.outs[3]!.split('\n')[3]).to.equal('| [1,null,3] | {"k":[true]} | false |   |');
  });

  it('-m and -r pick the member; --file reads the SQL; a statement without rows prints its tag', async () => {
    const ctx = await cluster();
    ctx.files.set('q.sql', 'insert into t values (1)');
    ctx.sqlResult = { columns: [], rows: [], command: 'INSERT', rowCount: 1 };
    await query(ctx, { file: 'q.sql', member: 'node3' });
    await query(ctx, { command: 'select 1', role: 'replica' });
    expect(ctx.sqlCalls.map((c) => c.target.connUrl)).to.deep.equal(['postgres://127.0.0.1:15434/postgres', 'postgres://127.0.0.1:15433/postgres']);
    expect(ctx.outs).to.deep.equal(['INSERT 1', 'INSERT 1']);
  });

  it('errors: no SQL, both -c and --file, a failing query', async () => {
    const ctx = await cluster();
    expect((await failure(query(ctx, {}))).message).to.equal('query needs -c SQL (or --file FILE)');
    expect((await failure(query(ctx, { command: 'x', file: 'y' }))).message).to.equal('give -c SQL or --file FILE, not both');
    ctx.sqlResult = new CtlError('query_failed', 'query failed: relation "t" does not exist (SQLSTATE 42P01)');
    expect((await failure(query(ctx, { command: 'select * from t' }))).message).to.equal('query failed: relation "t" does not exist (SQLSTATE 42P01)');
  });
});

describe('ctl query: connection string', () => {
  it('puts login and database into the member URL (escaped), keeping host and port', () => {
    expect(connectionString({ connUrl: 'postgres://127.0.0.1:15432/postgres', user: 'admin', password: 'p@ss/word', dbname: 'app' })).to.equal('postgres://admin:p%40ss%2Fword@127.0.0.1:15432/app');
    expect(connectionString({ connUrl: 'postgres://127.0.0.1:15432/postgres' })).to.equal('postgres://127.0.0.1:15432/postgres');
    expect(() => connectionString({ connUrl: 'host=x' })).to.throw('not a connection URL: host=x');
  });
});

describe('ctl remove', () => {
  it('deletes every key after the scope name and (with a leader) the leader name are typed', async () => {
    const ctx = await cluster();
    ctx.answers.push('demo', 'node1');
    await remove(ctx, 'demo');
    expect(ctx.questions[0]).to.equal('This deletes everything the DCS holds for cluster demo. Type the cluster name to confirm: ');
    expect(ctx.questions[1]).to.match(/has a leader \(node1\)/);
    expect(ctx.outs).to.deep.equal(['Removed 7 key(s) of cluster demo']);
    expect((await ctx.kv.readAll()).size).to.equal(0);
  });

  it('aborts on a wrong name, keeping every key; no leader: one question', async () => {
    const ctx = await cluster();
    ctx.answers.push('dem');
    expect((await failure(remove(ctx, 'demo'))).message).to.equal('Aborted: "dem" is not demo; nothing was removed');
    ctx.answers.push('demo', 'node2');
    expect((await failure(remove(ctx, 'demo'))).message).to.equal('Aborted: nothing was removed');
    expect((await ctx.kv.readAll()).size).to.equal(7);
    const leaderless = await cluster({ leader: null });
    leaderless.answers.push('demo');
    await remove(leaderless, 'demo');
    expect(leaderless.questions).to.have.length(1);
  });

  it('errors on an empty cluster and on a scope other than the connected one', async () => {
    const ctx = makeCtx();
    expect((await failure(remove(ctx, 'demo'))).message).to.equal('cluster demo does not exist in the DCS (no keys)');
    expect((await failure(remove(ctx, 'other'))).code).to.equal('scope_mismatch');
  });
});

describe('ctl version', () => {
  it('prints its own version, then each member\'s agent and server version', async () => {
    const ctx = await cluster();
    ctx.rest
      .on('GET', 'node', json(200, { state: 'running', server_version: 150018, svc: { version: '0.1.0', scope: 'demo', name: 'x' } }))
      .on('GET', 'node', 'unreachable', apiOf(3));
    const err = await failure(version(ctx.out, ctx));
    expect(ctx.outs[0]).to.match(/^wardenctl version \d+\.\d+\.\d+/);
    expect(ctx.outs.slice(1, 3)).to.deep.equal(['node1: warden 0.1.0, PostgreSQL 15.18', 'node2: warden 0.1.0, PostgreSQL 15.18']);
    expect(ctx.outs[3]).to.match(/^node3: no answer \(GET http:\/\/127.0.0.1:8010\/node: connect ECONNREFUSED\)$/);
    expect(err.message).to.equal('no answer from node3');
  });

  it('a member that is not in the cluster is an error, before anything is asked', async () => {
    const ctx = await cluster();
    const err = await failure(version(ctx.out, ctx, ['node9']));
    expect(err.code).to.equal('member_not_found');
    expect(ctx.rest.calls).to.deep.equal([]);
  });

  it('without a cluster prints only its own version; formats old and new server versions', async () => {
    const outs: string[] = [];
    await version((s) => outs.push(s), null);
    expect(outs).to.have.length(1);
    expect(formatServerVersion(150018)).to.equal('15.18');
    expect(formatServerVersion(90624)).to.equal('9.6.24');
  });
});
