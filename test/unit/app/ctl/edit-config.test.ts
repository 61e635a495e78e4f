import { expect } from 'chai';
import { ClusterKey } from '../../../../src/adapters/cluster-store/keys.js';
import { editConfig, paramPatch, parseScalar, setPatch } from '../../../../src/app/ctl/edit-config.js';
import { showConfig } from '../../../../src/app/ctl/show-config.js';
import { failure } from './failure.js';
import { makeCtx, seedCluster, type TestCtx } from './fixtures.js';

async function cluster(config: Record<string, unknown> | null = { ttl: 30, loop_wait: 10, db: { parameters: { max_connections: 100 } } }): Promise<TestCtx> {
  const ctx = makeCtx();
  await seedCluster(ctx.kv, { config });
  return ctx;
}

async function stored(ctx: TestCtx): Promise<unknown> {
  const e = (await ctx.kv.readAll()).get(ClusterKey.config);
  return e ? JSON.parse(e.value) : null;
}

describe('ctl edit-config', () => {
  it('parses -s values as YAML scalars and builds nested patches', () => {
    expect(parseScalar('30')).to.equal(30);
    expect(parseScalar('true')).to.equal(true);
    expect(parseScalar('quorum')).to.equal('quorum');
    expect(parseScalar('')).to.equal(null);
    expect(parseScalar('null')).to.equal(null);
    expect(parseScalar('[a, b]')).to.deep.equal(['a', 'b']);
    expect(setPatch('db.use_slots=false')).to.deep.equal({ db: { use_slots: false } });
    expect(setPatch('db.parameters.auto_explain.log_min_duration=100')).to.deep.equal({ db: { parameters: { 'auto_explain.log_min_duration': 100 } } });
    expect(setPatch('maximum_lag_on_failover=1MB')).to.deep.equal({ maximum_lag_on_failover: '1MB' });
    expect(paramPatch('pg_stat_statements.track=all')).to.deep.equal({ db: { parameters: { 'pg_stat_statements.track': 'all' } } });
    expect(() => setPatch('ttl')).to.throw(/-s\/--set expects name=value; got "ttl"/);
    expect(() => setPatch('db..x=1')).to.throw(/bad key path "db..x"/);
  });

  it('-s and -p: shows a unified diff, asks, writes with CAS, keeps other keys', async () => {
    const ctx = await cluster();
    ctx.answers.push(true);
    await editConfig(ctx, { set: ['ttl=40', 'loop_wait=null'], param: ['work_mem=8MB'] });
    expect(ctx.outs[0]).to.equal(
      ['--- before', '+++ after', '@@ -1,5 +1,5 @@', '-ttl: 30', '-loop_wait: 10', '+ttl: 40', ' db:', '   parameters:', '     max_connections: 100', '+    work_mem: 8MB'].join('\n'),
    );
    expect(ctx.questions).to.deep.equal(['Apply these changes?']);
    expect(ctx.outs[1]).to.equal('Configuration changed');
    expect(await stored(ctx)).to.deep.equal({ ttl: 40, db: { parameters: { max_connections: 100, work_mem: '8MB' } } });
  });

  it('--apply merges a YAML or JSON fragment (null removes); --quiet hides the diff', async () => {
    const ctx = await cluster();
    ctx.files.set('patch.yml', 'synchronous_mode: true\ndb:\n  parameters:\n    max_connections: null\n');
    ctx.files.set('patch.json', '{"check_timeline": true}');
    await editConfig(ctx, { apply: 'patch.yml', force: true, quiet: true });
    await editConfig(ctx, { apply: 'patch.json', force: true, quiet: true });
    expect(ctx.outs).to.deep.equal(['Configuration changed', 'Configuration changed']);
    expect(await stored(ctx)).to.deep.equal({ ttl: 30, loop_wait: 10, db: { parameters: {} }, synchronous_mode: true, check_timeline: true });
  });

  it('--replace takes the whole config from a file; -s then applies on top', async () => {
    const ctx = await cluster({ ttl: 30, loop_wait: 10, check_timeline: true });
    ctx.files.set('new.yml', 'ttl: 40\nloop_wait: 5\n');
    await editConfig(ctx, { replace: 'new.yml', set: ['retry_timeout=5'], force: true, quiet: true });
    expect(await stored(ctx)).to.deep.equal({ ttl: 40, loop_wait: 5, retry_timeout: 5 });
  });

  it('opens the editor without -s/-p/--apply, and replaces the config with what was saved', async () => {
    const ctx = await cluster();
    let shown = '';
    ctx.editor = (t) => ((shown = t), 'ttl: 60\nloop_wait: 10\n');
    await editConfig(ctx, { force: true });
    expect(shown).to.equal('ttl: 30\nloop_wait: 10\ndb:\n  parameters:\n    max_connections: 100\n');
    expect(await stored(ctx)).to.deep.equal({ ttl: 60, loop_wait: 10 });
  });

  it('an unreadable stored configuration (not a JSON object) is only replaced whole: a change merged into it would write the defaults', async () => {
    const ctx = await cluster();
    await ctx.kv.put(ClusterKey.config, 'synchronous_mode: true');
    for (const opts of [{ set: ['ttl=40'] }, { apply: 'patch.yml' }, {}]) {
      ctx.files.set('patch.yml', 'ttl: 40\n');
      ctx.editor = () => 'ttl: 40\n';
      const err = await failure(editConfig(ctx, { ...opts, force: true }));
      expect(err.code, JSON.stringify(opts)).to.equal('config_unreadable');
      expect(err.message).to.match(/cannot be read .*replace it whole with --replace FILE; nothing written/);
    }
    expect((await ctx.kv.readAll()).get(ClusterKey.config)?.value).to.equal('synchronous_mode: true');
    await showConfig(ctx);
    expect(ctx.warns.join('\n')).to.match(/the stored configuration cannot be read/);
    ctx.files.set('new.yml', 'ttl: 40\nsynchronous_mode: true\n');
    await editConfig(ctx, { replace: 'new.yml', force: true, quiet: true });
    expect(await stored(ctx)).to.deep.equal({ ttl: 40, synchronous_mode: true });
  });

  it('refuses a cluster with no configuration stored (a wrong name, or not bootstrapped yet), writing nothing', async () => {
    const ctx = await cluster(null);
    const err = await failure(editConfig(ctx, { set: ['ttl=40'], force: true }));
    expect(err.code).to.equal('config_not_stored');
    expect(err.message).to.match(/has no configuration stored .*nothing written/);
    expect((await ctx.kv.readAll()).has(ClusterKey.config)).to.equal(false);
  });

  it('changes read from standard input need --force (no answer can be read from there): the diff is shown, nothing written', async () => {
    const ctx = await cluster();
    ctx.files.set('-', 'ttl: 40\n');
    const err = await failure(editConfig(ctx, { apply: '-' }));
    expect(err.code).to.equal('force_needed');
    expect(ctx.questions).to.deep.equal([]);
    expect(ctx.outs.join('\n')).to.match(/\+ttl: 40/);
    expect(await stored(ctx)).to.deep.equal({ ttl: 30, loop_wait: 10, db: { parameters: { max_connections: 100 } } });
    await editConfig(ctx, { apply: '-', force: true, quiet: true });
    expect(await stored(ctx)).to.deep.include({ ttl: 40 });
  });

  it('"Not changed" when the result equals the stored config; nothing asked or written', async () => {
    const ctx = await cluster();
    const before = (await ctx.kv.readAll()).get(ClusterKey.config)!.revision;
    await editConfig(ctx, { set: ['ttl=30'] });
    expect(ctx.outs).to.deep.equal(['Not changed']);
    expect(ctx.questions).to.deep.equal([]);
    expect((await ctx.kv.readAll()).get(ClusterKey.config)!.revision).to.equal(before);
  });

  it('refuses an invalid result listing every problem, writing nothing', async () => {
    const ctx = await cluster();
    const err = await failure(editConfig(ctx, { set: ['ttl=5', 'loop_wait=abc'], force: true }));
    expect(err.code).to.equal('config_invalid');
    expect(err.message).to.match(/^invalid configuration, nothing written: .*ttl.*; .*loop_wait/);
    expect(await stored(ctx)).to.deep.equal({ ttl: 30, loop_wait: 10, db: { parameters: { max_connections: 100 } } });
  });

  it('refuses to overwrite a concurrent change (CAS on the revision read)', async () => {
    const ctx = await cluster();
    ctx.editor = (t) => {
      // Someone else writes while the editor is open.
      void ctx.kv.put(ClusterKey.config, JSON.stringify({ ttl: 50 }));
      return t.replace('ttl: 30', 'ttl: 45');
    };
    const err = await failure(editConfig(ctx, { force: true }));
    expect(err.code).to.equal('concurrent_change');
    expect(err.message).to.equal('the configuration was changed by someone else since it was read; nothing was written (run edit-config again)');
    expect(await stored(ctx)).to.deep.equal({ ttl: 50 });
  });

  it('aborts on no; rejects bad YAML and a non-mapping; replaces a malformed stored config, with a warning', async () => {
    const ctx = await cluster();
    expect((await failure(editConfig(ctx, { set: ['ttl=40'] }))).code).to.equal('aborted');
    ctx.editor = () => 'ttl: [';
    expect((await failure(editConfig(ctx, {}))).message).to.match(/^edited configuration: not valid YAML\/JSON/);
    ctx.editor = () => '- a\n- b\n';
    expect((await failure(editConfig(ctx, {}))).message).to.equal('edited configuration: expected a mapping of configuration keys');
    await ctx.kv.put(ClusterKey.config, '{oops');
    ctx.answers.push(true);
    ctx.files.set('new.yml', 'ttl: 40\n');
    await editConfig(ctx, { replace: 'new.yml' });
    expect(ctx.warns.join('\n')).to.match(/malformed DCS key \(path: config/);
    expect(JSON.parse((await ctx.kv.readAll()).get(ClusterKey.config)!.value)).to.deep.equal({ ttl: 40 });
  });
});

describe('ctl show-config', () => {
  it('prints the stored config as YAML (default) or JSON', async () => {
    const ctx = await cluster();
    await showConfig(ctx);
    await showConfig(ctx, { format: 'json' });
    expect(ctx.outs[0]).to.equal('ttl: 30\nloop_wait: 10\ndb:\n  parameters:\n    max_connections: 100');
    expect(JSON.parse(ctx.outs[1]!)).to.deep.equal({ ttl: 30, loop_wait: 10, db: { parameters: { max_connections: 100 } } });
  });

  it('prints {} without a config key; rejects other formats', async () => {
    const ctx = await cluster(null);
    await showConfig(ctx);
    expect(ctx.outs).to.deep.equal(['{}']);
    expect((await failure(showConfig(ctx, { format: 'tsv' }))).message).to.equal('--format must be yaml or json; got tsv');
  });
});
