// The package's entry points: each `exports` target is built from a source entry file, and
// each entry gives what the handbook promises.
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as adapters from '../../../src/adapters/index.js';
import * as agent from '../../../src/agent.js';
import * as core from '../../../src/index.js';
import * as testing from '../../../src/testing.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  exports: Record<string, string | { types: string; default: string }>;
  files: string[];
  bin: Record<string, string>;
  scripts: Record<string, string>;
};

describe('package entry points', () => {
  it('every exports target comes from a source file, with its declarations', () => {
    for (const [entry, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') continue;
      const src = target.default.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts');
      expect(existsSync(join(root, src)), `${entry} -> ${src}`).to.equal(true);
      expect(target.types).to.equal(target.default.replace(/\.js$/, '.d.ts'));
    }
    expect(pkg.scripts['prepack']).to.equal('npm run build');
    for (const f of ['dist/', 'docs/', 'collectors/', 'packaging/', 'LICENSE', 'README.md']) expect(pkg.files).to.include(f);
    for (const bin of Object.values(pkg.bin)) expect(existsSync(join(root, bin)), bin).to.equal(true);
  });

  it('warden: decide, the model, health predicates, config validation, errors and port tokens', () => {
    for (const name of ['decide', 'checkHealth', 'parseHealthQuery', 'eligibility', 'validateConfig', 'resolveConfig', 'mergePatch', 'clusterDocument', 'buildStatus', 'parseLsn', 'formatLsn', 'parseSize', 'stateText', 'scheduleSwitchover', 'checkManualRequest', 'chooseUpstream', 'failoverPriority', 'canLead']) {
      expect(typeof (core as Record<string, unknown>)[name], name).to.equal('function');
    }
    expect(core.DEFAULT_CONFIG.ttl).to.equal(30);
    expect(typeof core.ClusterStore).to.equal('symbol');
    expect(typeof core.Database).to.equal('symbol');
    expect(core.validateConfig({ ttl: 10 })).to.have.length.greaterThan(0);
  });

  it('warden/testing: the fakes, the HA loop and TestCluster', () => {
    for (const name of ['FakeClock', 'InMemoryKeyValueSpace', 'InMemoryClusterStore', 'FakeDatabase', 'FakeDatabaseNetwork', 'FakeWatchdog', 'FakeHookScripts', 'MemoryLogger', 'NullLogger', 'HaLoop', 'fixedSettings', 'TestCluster']) {
      expect(typeof (testing as Record<string, unknown>)[name], name).to.equal('function');
    }
  });

  it('warden/adapters and warden/agent: the production adapters and the composition root', () => {
    for (const name of ['Etcd3ClusterStore', 'Etcd3GatewayKeyValue', 'KeyValueClusterStore', 'PgDatabase', 'createAgentApi', 'createAgentServer', 'AgentMetrics', 'HttpPeerApi', 'LinuxWatchdog', 'JsonLinesLogger']) {
      expect(typeof (adapters as Record<string, unknown>)[name], name).to.equal('function');
    }
    for (const name of ['HaLoop', 'createAgentContainer', 'startAgent', 'loadLocalConfig', 'parseLocalConfig']) {
      expect(typeof (agent as Record<string, unknown>)[name], name).to.equal('function');
    }
  });
});
