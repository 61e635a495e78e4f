import { expect } from 'chai';
import { parseCluster } from '../../../../src/adapters/cluster-store/codec.js';
import { InMemoryClusterStore } from '../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { InMemoryKeyValueSpace } from '../../../../src/adapters/cluster-store/in-memory-key-value.js';
import type { DcsEntry } from '../../../../src/adapters/cluster-store/keys.js';
import { nodeSnapshot } from '../../../../src/app/agent/node-snapshot.js';
import { resolveConfig, type DynamicConfig } from '../../../../src/domain/cluster/config/config.js';
import { decide } from '../../../../src/domain/cluster/ha/decide.js';
import { EMPTY_MEMORY, type Decision, type TickInput } from '../../../../src/domain/cluster/ha/decision.js';
import type { Cluster } from '../../../../src/domain/cluster/model/cluster.js';
import { stoppedFacts } from '../../../../src/domain/cluster/model/facts.js';
import type { NodeStatus } from '../../../../src/domain/cluster/model/status.js';
import { input, leaderInput, peerStatus, primaryFacts, replicaFacts, row, settings } from '../../domain/cluster/ha/fixtures.js';
import { CaseLog, fuzzCases, fuzzSeed, ProcessEvents } from '../http/fuzz-kit.js';
import { ListLogger, nodeSettings, startApi, type ApiHarness, SteppingClock } from '../http/support.js';
import { clusterTypeProblems, describeStore, FUZZ_NOW, generateStore, Random, SYSID, type GeneratedStore } from './codec-fuzz-kit.js';

/**
 * Generative fuzzing of what the agents find in etcd: a cluster's keys as this version writes
 * them, then some of them garbled (fields of the wrong type, missing, extra, null, huge,
 * negative, NaN-like strings, bad LSNs, long and unicode strings, deep nesting), replaced by
 * Patroni's format of the same key, by another key's value, by JSON of the wrong shape or by
 * text that is not JSON, deleted, or joined by members with odd names. For each store:
 *
 * - the codec (parseCluster) and the agent's real read path (KeyValueClusterStore.read over
 *   the in-memory key-value store, with and without the watched copy) never throw, and the
 *   cluster they give holds only the types the domain declares (positions non-negative
 *   integers, timelines 1..2^32-1, tags scalars, scheduled restarts of their own fields...);
 *   every unreadable key is logged;
 * - decide() never throws for a healthy replica, the leader holding the lock (reaching the
 *   DCS, and cut off it: failsafe mode), a primary without it and a stopped replica
 *   (answering its requests for peers or a failsafe round), asks for no action with a
 *   number that is not finite, and no member but the one the leader key names (whatever
 *   else it holds) acquires the lock or promotes while that key exists;
 * - the snapshot the API answers from builds, and GET /cluster, /history, /config, /node,
 *   /metrics, /ui/data and the health checks over the fakes never answer 5xx (but a health
 *   check's 503), nor log an unexpected failure.
 *
 * The seed is fresh each run; a failure prints it with each failing store, key by key.
 * Replay: WARDEN_FUZZ_SEED=<seed> npx mocha test/unit/adapters/cluster-store/codec-fuzz.test.ts
 * (WARDEN_FUZZ_CASES=<n> for a longer run).
 */

const SEED = fuzzSeed();
const CASES = fuzzCases(250);

/** A local state decide() is asked about. */
interface LocalState {
  readonly name: string;
  readonly me: string;
  readonly input: (cluster: Cluster, config: DynamicConfig) => TickInput;
}

const memory = (lastRole: 'primary' | 'replica' | null) => ({ ...EMPTY_MEMORY, appliedParameters: '{}', lastRole });
const node3 = settings({ name: 'node3', apiUrl: 'http://node3:8008', connUrl: 'postgres://node3:5432/postgres' });

const STATES: readonly LocalState[] = [
  {
    name: 'a healthy replica (node2)',
    me: 'node2',
    input: (cluster, config) => input({ cluster, config, facts: replicaFacts(4990, 'node1', { systemIdentifier: SYSID, timeline: 2 }), memory: memory('replica') }),
  },
  {
    name: 'the primary holding the lock (node1)',
    me: 'node1',
    input: (cluster, config) =>
      leaderInput({ cluster, config, facts: primaryFacts(5000, { systemIdentifier: SYSID, timeline: 2, replication: [row('node2', 4990), row('node3', 4980)] }) }),
  },
  {
    name: 'a primary without the lock (node3)',
    me: 'node3',
    input: (cluster, config) => input({ node: node3, cluster, config, facts: primaryFacts(5000, { systemIdentifier: SYSID, timeline: 2 }), memory: memory('primary') }),
  },
  {
    name: 'the primary holding the lock, cut off the DCS (node1: failsafe mode reads the failsafe key)',
    me: 'node1',
    input: (cluster, config) =>
      leaderInput({ cluster, config, dcsReachable: false, facts: primaryFacts(5000, { systemIdentifier: SYSID, timeline: 2, replication: [row('node2', 4990)] }) }),
  },
  {
    name: 'a stopped replica (node2)',
    me: 'node2',
    input: (cluster, config) =>
      input({ cluster, config, facts: { ...stoppedFacts('stopped', true), systemIdentifier: SYSID, timeline: 2, stoppedAsReplica: true }, memory: memory('replica') }),
  },
];

/** What the peers answer when decide() asks: some unreachable, some replicas ahead or behind, now and then a primary. */
function peersOf(rng: Random, cluster: Cluster, me: string): Map<string, NodeStatus | null> {
  const peers = new Map<string, NodeStatus | null>();
  for (const m of cluster.members) {
    if (m.name === me) continue;
    const kind = rng.weighted({ down: 3, replica: 6, primary: 1 });
    peers.set(m.name, kind === 'down' ? null : peerStatus(kind, rng.pick([4000, 4990, 5000, 6000]), { timeline: 2 }));
  }
  return peers;
}

/** decide(), then again with what it asked for (peers, a failsafe round), as the HA loop does. */
function decisions(rng: Random, first: TickInput, me: string): Decision[] {
  const out: Decision[] = [];
  let tick = first;
  for (let round = 0; round < 4; round++) {
    const d = decide(tick);
    out.push(d);
    if (d.need === 'peers') tick = { ...tick, peers: peersOf(rng, tick.cluster, me) };
    else if (d.need === 'failsafe') tick = { ...tick, failsafeConfirmed: rng.chance(0.5) };
    else break;
  }
  return out;
}

/** Paths to numbers that are not finite anywhere in `v`. */
function nonFinite(v: unknown, path = ''): string[] {
  if (typeof v === 'number') return Number.isFinite(v) ? [] : [`${path} = ${v}`];
  if (v === null || typeof v !== 'object') return [];
  return Object.entries(v as Record<string, unknown>).flatMap(([k, x]) => nonFinite(x, `${path}.${k}`));
}

const LOCK_OR_PROMOTE = new Set(['acquireLeader', 'promote', 'prePromote']);

const API_PATHS = ['/cluster', '/history', '/config', '/node', '/metrics', '/ui/data'];
const HEALTH_PATHS = ['/primary', '/replica?lag=1MB', '/sync', '/health', '/readiness', '/leader'];

const errorText = (e: unknown) => String((e as Error)?.stack ?? e).split('\n').slice(0, 6).join('\n      ');

function snapshotOf(store: ReadonlyMap<string, string>): Map<string, DcsEntry> {
  let rev = 10;
  return new Map([...store].map(([k, v]) => [k, { value: v, revision: String(rev++) }]));
}

describe('cluster store: generative fuzzing of the stored values (seeded; WARDEN_FUZZ_SEED replays)', function () {
  this.timeout(Math.max(120_000, CASES * 50));
  const events = new ProcessEvents();
  let api: ApiHarness;
  before(async () => {
    api = await startApi({ pollIntervalMs: 50 });
    events.hook();
  });
  after(async () => {
    events.unhook();
    await api.close();
  });

  it(`${CASES} stores with garbage under every key: decoded into the declared types without a throw, decide() safe, the API never 5xx (seed ${SEED})`, async () => {
    const rng = new Random(SEED);
    const failures = new CaseLog('cluster store fuzz', SEED);
    const started = Date.now();
    const apiClock = api.clock as SteppingClock;
    let errorLines = 0;
    const kinds = new Map<string, number>();
    for (let i = 0; i < CASES; i++) {
      const g: GeneratedStore = generateStore(rng);
      const label = `case ${i}:\n${describeStore(g)}`;
      events.current = label;
      const fail = (kind: string, detail: string) => {
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        failures.add(kind, `${kind}\n  ${detail}\n  ${label}`);
      };

      // (a) The codec, then the agent's own read path (the parser with its cache and log, over the key-value store).
      try {
        const { cluster } = parseCluster(snapshotOf(g.store));
        const bad = clusterTypeProblems(cluster);
        if (bad.length) fail(`parseCluster passes a value of the wrong type into the domain: ${bad[0]!.replace(/ = .*/, '')}`, bad.slice(0, 5).join('; '));
      } catch (e) {
        fail('parseCluster threw', errorText(e));
      }
      let cluster: Cluster | null = null;
      const logger = new ListLogger();
      const space = new InMemoryKeyValueSpace(new SteppingClock(FUZZ_NOW));
      const reader = new InMemoryClusterStore(space, { clientId: 'node2', logger, watchedCopy: rng.chance(0.5) });
      try {
        for (const [k, v] of g.store) await reader.client.put(k, v);
        cluster = await reader.read();
        const bad = clusterTypeProblems(cluster);
        if (bad.length) fail(`the store's read passes a value of the wrong type into the domain: ${bad[0]!.replace(/ = .*/, '')}`, bad.slice(0, 5).join('; '));
        const { problems } = parseCluster(snapshotOf(g.store));
        const logged = logger.lines.filter((l) => l.level === 'warn').map((l) => String(l.fields?.['path'] ?? ''));
        for (const p of problems) if (!logged.includes(p.path)) fail('an unreadable key is not logged', `${p.path}: ${p.message}`);
      } catch (e) {
        fail("the store's read threw", errorText(e));
      } finally {
        await reader.close();
      }
      if (cluster === null) continue;

      // (b) decide() for a few local states, with what it asks for.
      const config = resolveConfig(cluster.config?.value ?? {});
      const leaderRaw = g.store.get('leader');
      for (const state of STATES) {
        let ds: Decision[];
        try {
          ds = decisions(rng, state.input(cluster, config), state.me);
        } catch (e) {
          fail(`decide() threw for ${state.name}`, errorText(e));
          continue;
        }
        for (const d of ds) {
          const odd = nonFinite(d.actions);
          if (odd.length) fail(`decide() asks for an action with a number that is not finite (${state.name})`, `${odd.join(', ')}: ${d.message}`);
          if (leaderRaw !== undefined && leaderRaw !== state.me) {
            const bad = d.actions.filter((a) => LOCK_OR_PROMOTE.has(a.type));
            if (bad.length) fail(`${state.name} takes the lock or promotes while the leader key names ${JSON.stringify(leaderRaw.slice(0, 40))}`, `${bad.map((a) => a.type).join(', ')}: ${d.message}`);
          }
        }
      }

      // (c) The API over the fakes: the published snapshot built from this view, and the routes that render the cluster.
      apiClock.t += 2000;
      const now = apiClock.now();
      try {
        const leader = rng.chance(0.5);
        api.control.snap = nodeSnapshot({
          now,
          lastLoopAt: now - 500,
          facts: leader ? primaryFacts(5000, { systemIdentifier: SYSID, timeline: 2 }) : replicaFacts(4990, 'node1', { systemIdentifier: SYSID, timeline: 2 }),
          settings: { node: nodeSettings({ name: leader ? 'node1' : 'node2' }), local: { bootstrapDcs: {}, parameters: {}, watchdogSafetyMargin: 5 } },
          config,
          cluster,
          clusterReadAt: now - 500,
          dcsReachable: true,
          lockDeadline: leader ? now + 20_000 : null,
          jobName: null,
          failsafeAcceptedAt: null,
          failsafeActive: false,
          watchdogUsable: true,
          scheduledRestart: null,
        });
      } catch (e) {
        fail('the node snapshot (what the API answers from) threw', errorText(e));
        continue;
      }
      for (const k of (await api.dcs.readAll()).keys()) if (!g.store.has(k)) await api.dcs.delete(k);
      for (const [k, v] of g.store) await api.dcs.put(k, v);
      for (const path of [...API_PATHS, rng.pick(HEALTH_PATHS)]) {
        try {
          const res = await api.request('GET', path);
          const health = HEALTH_PATHS.includes(path);
          if (res.status >= 500 && !(health && res.status === 503)) fail(`GET ${path.replace(/\?.*/, '')} answers ${res.status}`, res.text.slice(0, 300));
          else if ((res.headers.get('content-type') ?? '').includes('json') && res.text && res.json === undefined) fail(`GET ${path.replace(/\?.*/, '')} answers JSON that does not parse`, res.text.slice(0, 300));
        } catch (e) {
          fail(`GET ${path} failed`, errorText(e));
        }
      }
      const errors = api.logger.lines.filter((l) => l.level === 'error');
      if (errors.length > errorLines) {
        fail('the API logged an unexpected failure', JSON.stringify(errors.slice(errorLines)).slice(0, 600));
        errorLines = errors.length;
      }
      while (events.seen.length) fail('uncaught exception or unhandled rejection', events.seen.shift()!);
    }
    await new Promise((r) => setImmediate(r));
    while (events.seen.length) failures.add('late', events.seen.shift()!);
    const summary = [...kinds].map(([k, n]) => `  ${n}x ${k}`).join('\n');
    if (!failures.empty) expect.fail(`every kind of failure:\n${summary}\n${failures.report()}`);
    if (process.env['WARDEN_FUZZ_VERBOSE']) console.log(`cluster store fuzz: seed ${SEED}, ${CASES} cases in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  });
});
