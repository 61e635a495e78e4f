import { expect } from 'chai';
import { FakeClock } from '../../../../src/adapters/clock/fake-clock.js';
import { InMemoryKeyValue, InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import { InMemoryClusterStore } from '../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { spawn } from 'node:child_process';
import { lineWriter, runCli, type CtlIo } from '../../../../src/app/ctl/main.js';
import type { CtlConfig } from '../../../../src/app/ctl/ctl-config.js';
import { FakeRest, json, seedCluster } from './fixtures.js';

interface Harness {
  io: CtlIo;
  store: InMemoryKeyValueSpace;
  rest: FakeRest;
  stdout: string[];
  stderr: string[];
  answers: string[];
  configs: { config: CtlConfig; scope: string }[];
  run(...args: string[]): Promise<number>;
}

async function harness(env: NodeJS.ProcessEnv = {}): Promise<Harness> {
  const store = new InMemoryKeyValueSpace(new FakeClock());
  const seedDcs = new InMemoryKeyValue(store, { clientId: 'seed', prefix: '/service/demo/' });
  await seedCluster(seedDcs);
  const h: Harness = {
    store,
    rest: new FakeRest(),
    stdout: [],
    stderr: [],
    answers: [],
    configs: [],
    io: undefined as unknown as CtlIo,
    run: (...args) => runCli(['node', 'wardenctl', ...args], h.io),
  };
  h.io = {
    stdout: (s) => h.stdout.push(s),
    stderr: (s) => h.stderr.push(s),
    env,
    makeStore: (config, scope) => {
      h.configs.push({ config, scope });
      return new InMemoryClusterStore(store, { clientId: 'ctl', prefix: `${config.namespace}/${scope}/` });
    },
    makeRest: () => h.rest,
    prompter: {
      ask: async () => h.answers.shift() ?? '',
      confirm: async () => h.answers.shift() === 'y',
      close: () => undefined,
    },
    signal: new AbortController().signal,
  };
  return h;
}

describe('ctl main (command line wiring)', () => {
  it('list --scope demo -f json prints the members and exits 0', async () => {
    const h = await harness();
    expect(await h.run('--scope', 'demo', 'list', '-f', 'json')).to.equal(0);
    expect(JSON.parse(h.stdout.join('')).map((r: { Member: string }) => r.Member)).to.deep.equal(['node1', 'node2', 'node3']);
    expect(h.configs[0]!.scope).to.equal('demo');
    expect(h.configs[0]!.config.etcd.hosts).to.deep.equal(['127.0.0.1:2379']);
  });

  it('list takes the scope as an argument too; --dcs and --namespace reach the KeyValueStore factory', async () => {
    const h = await harness();
    expect(await h.run('--dcs', '10.1.1.1:2379', '-n', '/service', 'list', 'demo', '-f', 'tsv')).to.equal(0);
    expect(h.configs[0]!.config.etcd.hosts).to.deep.equal(['10.1.1.1:2379']);
    expect(h.stdout[0]!.split('\n')).to.have.length(4);
  });

  it('a failure is one line on stderr with exit code 1, no stack trace', async () => {
    const h = await harness();
    expect(await h.run('--scope', 'demo', 'switchover', '--candidate', 'node9', '--force')).to.equal(1);
    expect(h.stderr).to.deep.equal(['wardenctl: member node9 is not in the cluster (members: node1, node2, node3)']);
  });

  it('a missing scope is a clear error', async () => {
    const h = await harness();
    expect(await h.run('list')).to.equal(1);
    expect(h.stderr[0]).to.match(/^wardenctl: no cluster name: give --scope NAME/);
  });

  it('an unreachable DCS names the hosts', async () => {
    const h = await harness();
    h.store.setReachable(false);
    expect(await h.run('--scope', 'demo', 'list')).to.equal(1);
    expect(h.stderr).to.have.length(1);
    expect(h.stderr[0]).to.match(/^wardenctl: cannot reach the DCS at 127\.0\.0\.1:2379: /);
  });

  it('usage errors exit 2; help, -V and --version exit 0', async () => {
    const h = await harness();
    expect(await h.run('lst')).to.equal(2);
    expect(h.stderr[0]).to.match(/unknown command 'lst'/);
    expect(await h.run('--scope', 'demo', 'list', '-f', 'xml')).to.equal(2);
    // Values our own checks refuse are usage errors too, printed as one wardenctl line.
    h.stderr.length = 0;
    expect(await h.run('--scope', 'demo', 'failover', '--force')).to.equal(2);
    expect(h.stderr[0]).to.match(/^wardenctl: failover needs --candidate/);
    expect(await h.run('--scope', 'demo', 'switchover', '--scheduled', '1/2/2030', '--force')).to.equal(2);
    expect(await h.run('--help')).to.equal(0);
    expect(h.stdout.join('\n')).to.include('edit-config');
    h.stdout.length = 0;
    expect(await h.run('-V')).to.equal(0);
    expect(await h.run('--version')).to.equal(0);
    expect(h.stdout).to.have.length(2);
    expect(h.stdout[1]).to.match(/^wardenctl version \d+\.\d+\.\d+$/);
  });

  it('global options go before the command, so a command may reuse their letters: query -c SQL -d DB after -c FILE -d DCS', async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'ctlmain-'));
    try {
      writeFileSync(join(dir, 'node.yml'), 'scope: demo\ndb: {authentication: {superuser: {username: postgres, password: pw}}}\n');
      const h = await harness();
      // An unknown member stops query before it connects: the harness has no database.
      expect(await h.run('-c', join(dir, 'node.yml'), '-d', 'etcd3://10.0.0.5:2379', '-k', 'query', '-c', 'select 1', '-d', 'app', '-U', 'ops', '--format', 'tsv', '--delimiter', ';', '-m', 'node9')).to.equal(1);
      expect(h.stderr.at(-1)).to.equal('wardenctl: member node9 is not in the cluster (members: node1, node2, node3)');
      expect(h.configs.at(-1)!.config.etcd.hosts).to.deep.equal(['10.0.0.5:2379']);
      expect(h.configs.at(-1)!.config.rest.insecure).to.equal(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('version with an unknown member exits 1 naming it', async () => {
    const h = await harness();
    expect(await h.run('--scope', 'demo', 'version', 'node9')).to.equal(1);
    expect(h.stderr).to.deep.equal(['wardenctl: member node9 is not in the cluster (members: node1, node2, node3)']);
    const unscoped = await harness();
    expect(await unscoped.run('version', 'node9')).to.equal(1);
    expect(unscoped.stderr[0]).to.match(/^wardenctl: no cluster name/);
  });

  it('aliases: switchover --primary, failover --leader, restart --any --pg-version, edit-config --pg, dsn -m', async () => {
    const h = await harness();
    h.rest.on('POST', 'switchover', json(200, { message: 'switched' })).on('POST', 'failover', json(200, { message: 'switched' })).on('POST', 'restart', json(200, { message: 'restarted' }));
    expect(await h.run('--scope', 'demo', 'switchover', '--primary', 'node1', '--candidate', 'node2', '--force')).to.equal(0);
    expect(await h.run('--scope', 'demo', 'failover', '--leader', 'node1', '--candidate', 'node2', '--force')).to.equal(0);
    expect(h.rest.calls.map((c) => c.body)).to.deep.equal([{ leader: 'node1', candidate: 'node2' }, { candidate: 'node2', leader: 'node1' }]);
    expect(await h.run('--scope', 'demo', 'restart', '--any', '--pg-version', '16.1', '--force')).to.equal(0);
    expect(h.rest.calls.slice(2).map((c) => c.body)).to.deep.equal([{ db_version: '16.1' }]);
    expect(await h.run('--scope', 'demo', 'edit-config', '--pg', 'work_mem=8MB', '--param', 'shared_buffers=1GB', '--force', '-q')).to.equal(0);
    expect(await h.run('--scope', 'demo', 'show-config', '-f', 'json')).to.equal(0);
    expect(JSON.parse(h.stdout.at(-1)!).db).to.deep.equal({ parameters: { work_mem: '8MB', shared_buffers: '1GB' } });
    expect(await h.run('--scope', 'demo', 'dsn', '-m', 'node2')).to.equal(0);
    expect(h.stdout.at(-1)).to.equal('host=127.0.0.1 port=15433');
    expect(await h.run('--scope', 'demo', 'dsn', '--role', 'master')).to.equal(0);
    expect(h.stdout.at(-1)).to.equal('host=127.0.0.1 port=15432');
    expect(await h.run('--scope', 'demo', 'dsn', '--role', 'standby')).to.equal(0);
    expect(h.stdout.at(-1)).to.equal('host=127.0.0.1 port=15433');
  });

  it('destructive commands ask on the prompter, and a "no" exits 1 with Aborted', async () => {
    const h = await harness();
    expect(await h.run('--scope', 'demo', 'restart', 'node2')).to.equal(1);
    expect(h.stderr).to.deep.equal(['wardenctl: Aborted: nothing was changed']);
    h.answers.push('y');
    h.rest.on('POST', 'restart', json(200, { message: 'restarted' }));
    expect(await h.run('--scope', 'demo', 'restart', 'node2', '--role', 'replica')).to.equal(0);
    expect(h.stdout).to.deep.equal(['node2: restarted']);
  });

  it('repeatable -s/-p options reach edit-config; the config file comes from $WARDENCTL_CONFIG', async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'ctlmain-'));
    try {
      writeFileSync(join(dir, 'ctl.yml'), 'scope: demo\n');
      const h = await harness({ WARDENCTL_CONFIG: join(dir, 'ctl.yml') });
      expect(await h.run('edit-config', '-s', 'ttl=40', '-s', 'retry_timeout=5', '-p', 'work_mem=8MB', '--force', '-q')).to.equal(0);
      expect(await h.run('show-config', '-f', 'json')).to.equal(0);
      expect(JSON.parse(h.stdout.at(-1)!)).to.deep.equal({ ttl: 40, loop_wait: 10, retry_timeout: 5, db: { parameters: { work_mem: '8MB' } } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('version works without any cluster configured', async () => {
    const h = await harness();
    expect(await h.run('version')).to.equal(0);
    expect(h.stdout).to.have.length(1);
    expect(h.configs).to.deep.equal([]);
  });
});

describe('ctl output to a pipe whose reader went away (wardenctl ... | head -1)', () => {
  it('drops the lines after EPIPE instead of an unhandled error event that kills the command', async () => {
    // A real pipe whose reader closed its end (as head does after its first line).
    const child = spawn('sh', ['-c', 'exec 0<&-; sleep 1']);
    await new Promise((r) => setTimeout(r, 200));
    const out = lineWriter(child.stdin);
    out('node2: restarted successfully');
    await new Promise((r) => setTimeout(r, 100));
    out('node3: restarted successfully');
    await new Promise((r) => setTimeout(r, 100));
    child.kill();
    expect(child.stdin.destroyed).to.equal(true);
  });
});
