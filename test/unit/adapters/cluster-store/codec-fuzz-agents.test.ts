import { expect } from 'chai';
import { InMemoryKeyValue } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import { TestCluster } from '../../../../src/app/testing/test-cluster.js';
import { CaseLog, fuzzSeed, ProcessEvents } from '../http/fuzz-kit.js';
import { garbage, Random } from './codec-fuzz-kit.js';

/**
 * The same garbage as codec-fuzz.test.ts, written by an operator's client (no lease) under
 * the keys of a running 3-node cluster: the real agents (HA loop, observers, pipeline, store,
 * fake databases) run on for a minute of fake time. Checked: no tick fails ("HA tick failed"
 * is never logged), no split brain (two writable servers), no uncaught exception, and unless
 * the leader or failover key itself was touched, no member but the leader ever accepts writes
 * (garbage is no reason to promote).
 *
 * Replay: WARDEN_FUZZ_SEED=<seed> npx mocha test/unit/adapters/cluster-store/codec-fuzz-agents.test.ts
 * (WARDEN_FUZZ_AGENT_CASES=<n> for a longer run).
 */

const SEED = fuzzSeed();
const CASES = ((n) => (Number.isSafeInteger(n) && n > 0 ? n : 40))(Number(process.env['WARDEN_FUZZ_AGENT_CASES'] ?? ''));
const NAMES = ['node1', 'node2', 'node3'];
const KEYS = ['initialize', 'config', 'leader', 'failover', 'sync', 'history', 'status', 'failsafe', ...NAMES.map((n) => `members/${n}`)];

describe('cluster store: garbage under the keys of a running cluster (real agents over the fakes; seeded)', function () {
  this.timeout(Math.max(120_000, CASES * 200));
  const events = new ProcessEvents();
  before(() => events.hook());
  after(() => events.unhook());

  it('a configuration nested 20000 levels deep: the leader keeps leading, no tick fails (a tick of the leader used to fail on it: its event reporter diffs the configuration recursively)', async () => {
    const cluster = new TestCluster({ names: NAMES });
    try {
      cluster.start(['node1']);
      await cluster.until(() => cluster.primary() === 'node1', 60_000, 'node1 to bootstrap');
      cluster.start();
      await cluster.until(() => cluster.streaming().length === 2, 120_000, 'two replicas streaming');
      const d = 20_000;
      await new InMemoryKeyValue(cluster.space, { clientId: 'operator' }).put('config', `{"ttl":30,"x":${'['.repeat(d)}${']'.repeat(d)}}`);
      await cluster.advance(60_000);
      expect(cluster.primary()).to.equal('node1');
      expect(cluster.nodes.flatMap((n) => n.logger.lines.filter((l) => l.level === 'error').map((l) => `${n.name}: ${l.msg} ${JSON.stringify(l.fields)}`))).to.deep.equal([]);
      expect(cluster.nodes.some((n) => n.logger.lines.some((l) => l.msg === 'ignoring a malformed DCS key' && l.fields?.['path'] === 'config'))).to.equal(true);
    } finally {
      cluster.shutdown();
    }
  });

  it(`${CASES} clusters: no tick fails, no split brain, no member but the leader writes unless the leader or failover key changed (seed ${SEED})`, async () => {
    const rng = new Random(SEED);
    const failures = new CaseLog('running cluster fuzz', SEED);
    for (let i = 0; i < CASES; i++) {
      const config = rng.pick([{ ttl: 30, loop_wait: 10, retry_timeout: 10 }, { ttl: 30, loop_wait: 10, retry_timeout: 10, synchronous_mode: true }, { ttl: 30, loop_wait: 10, retry_timeout: 10, failsafe_mode: true }]);
      const cluster = new TestCluster({ names: NAMES, config });
      const writes: string[] = [];
      const label = () => `case ${i} (config ${JSON.stringify(config)}), written:\n${writes.map((w) => `    ${w}`).join('\n')}`;
      const fail = (kind: string, detail: string) => failures.add(kind, `${kind}\n  ${detail}\n  ${label()}`);
      try {
        cluster.start(['node1']);
        await cluster.until(() => cluster.primary() === 'node1', 60_000, 'node1 to bootstrap');
        cluster.start();
        await cluster.until(() => cluster.streaming().length === 2, 120_000, 'two replicas streaming');
        const operator = new InMemoryKeyValue(cluster.space, { clientId: 'operator' });
        const touched = new Set<string>();
        const count = rng.int(1, 3);
        for (let k = 0; k < count; k++) {
          const key = rng.pick(KEYS);
          let g = garbage(rng, key, KEYS);
          // An operator naming another member in the leader key hands it the lock: not garbage.
          while (key === 'leader' && NAMES.includes(g.value.trim())) g = garbage(rng, key, KEYS);
          await operator.put(key, g.value);
          touched.add(key);
          writes.push(`${key} = ${JSON.stringify(g.value.length > 300 ? `${g.value.slice(0, 300)}...(${g.value.length} chars)` : g.value)} [${g.note}]`);
        }
        events.current = label();
        const mayChangeLeader = touched.has('leader') || touched.has('failover');
        for (let s = 0; s < 60; s++) {
          try {
            await cluster.advance(1000);
          } catch (e) {
            fail('split brain', String((e as Error).message));
            break;
          }
          const others = cluster.nodes.filter((n) => n.name !== 'node1' && n.db.isWritable).map((n) => n.name);
          if (!mayChangeLeader && others.length) {
            fail('a member promotes although the leader key was left alone', `${others.join(', ')} accepts writes after ${s + 1} s`);
            break;
          }
        }
        for (const n of cluster.nodes) {
          const failed = n.logger.lines.filter((l) => l.level === 'error');
          if (failed.length) fail(`${n.name} logged an error`, failed.slice(0, 3).map((l) => `${l.msg} ${JSON.stringify(l.fields ?? {}).slice(0, 400)}`).join('\n  '));
        }
        while (events.seen.length) fail('uncaught exception or unhandled rejection', events.seen.shift()!);
      } catch (e) {
        fail('the case failed', String((e as Error)?.stack ?? e).slice(0, 800));
      } finally {
        cluster.shutdown();
      }
    }
    await new Promise((r) => setImmediate(r));
    while (events.seen.length) failures.add('late', events.seen.shift()!);
    if (!failures.empty) expect.fail(failures.report());
    if (process.env['WARDEN_FUZZ_VERBOSE']) console.log(`running cluster fuzz: seed ${SEED}, ${CASES} clusters`);
  });
});
