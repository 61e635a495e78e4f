import { expect } from 'chai';
import { DcsUnavailableError } from '../../../../../src/domain/errors.js';
import type { InMemoryClusterStore } from '../../../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { FakeHookScripts } from '../../../../../src/adapters/callbacks/fake-hook-scripts.js';
import { SimCluster } from '../../../../sim/sim-cluster.js';

/** Makes the first call of a store write fail as when etcd does not answer (`before` runs first); later calls go through. */
function failFirstCall(store: InMemoryClusterStore, method: 'writeConfig' | 'completeInitialize', message: string, before = (): void => undefined): { done: boolean } {
  const state = { done: false };
  const original = store[method].bind(store) as (...args: unknown[]) => Promise<unknown>;
  Object.assign(store, {
    [method]: async (...args: unknown[]) => {
      if (state.done) return original(...args);
      state.done = true;
      before();
      throw new DcsUnavailableError(message);
    },
  });
  return state;
}

describe('HA scenarios: bootstrap', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('3 nodes: one wins the initialize race, initdb, leads; the others clone it and stream', async () => {
    sim = new SimCluster({ names: ['node1', 'node2', 'node3'], verboseLogs: true });
    sim.startAll();
    await sim.until(() => sim.primary() !== null, 60_000, 'a primary');
    const leader = sim.primary()!;
    expect(sim.leaderKey()).to.equal(leader.name);
    await sim.until(() => [...sim.nodes.values()].filter((n) => n.db.isStreaming).length === 2, 60_000, 'two streaming replicas');
    const view = sim.view();
    expect(view.initialize).to.equal(leader.db.systemIdentifier);
    expect(view.config?.value).to.deep.include({ ttl: 30, loop_wait: 10 });
    expect(view.members.map((m) => m.name)).to.deep.equal(['node1', 'node2', 'node3']);
    for (const n of sim.nodes.values()) expect(n.db.systemIdentifier).to.equal(leader.db.systemIdentifier);
  });

  it('a bootstrap whose configuration write fails after the server started keeps its data and its lead; the leader writes the configuration later', async () => {
    sim = new SimCluster({ names: ['node1'], verboseLogs: true });
    const n = sim.node('node1');
    n.startAgent();
    failFirstCall(n.dcs, 'writeConfig', 'etcd put config: no answer within 5000 ms');
    await sim.until(() => sim.view().config !== null, 60_000, 'the configuration written');
    expect(n.logger.lines.some((l) => l.msg.startsWith('bootstrap failed')), 'the bootstrap job failed at the configuration').to.equal(true);
    const sysid = sim.view().initialize;
    expect(sysid).to.be.a('string').and.not.equal('');
    expect(n.db.systemIdentifier, 'the same data directory: not removed, not created again').to.equal(sysid);
    expect(sim.leaderKey()).to.equal('node1');
    expect(sim.primary()?.name).to.equal('node1');
    expect(sim.view().config?.value).to.deep.include({ ttl: 30 });
  });

  it('a bootstrap frozen past its lease as it writes the initialize key keeps its data: the claim is abandoned, the data registered, the node leads again', async () => {
    sim = new SimCluster({ names: ['node1'], verboseLogs: true });
    const n = sim.node('node1');
    n.startAgent();
    // Frozen as the error reaches the job: it resumes only after the lease ran out.
    const failed = failFirstCall(n.dcs, 'completeInitialize', 'etcd put initialize: no answer within 5000 ms', () => queueMicrotask(() => n.freezeAgent()));
    await sim.until(() => failed.done, 60_000, 'the initialize write');
    const sysid = n.db.systemIdentifier;
    await sim.advance(60_000);
    expect(n.db.isRunning, 'fenced while frozen').to.equal(false);
    n.thawAgent();
    await sim.until(() => sim.primary()?.name === 'node1' && sim.view().initialize === sysid, 180_000, 'node1 leading with its data registered');
    expect(n.db.systemIdentifier, 'the same data directory').to.equal(sysid);
  });

  it('an empty node waiting on that abandoned claim does not bootstrap a second cluster: the node with data registers it first and the empty one clones it', async () => {
    sim = new SimCluster({ names: ['node1', 'node2'], verboseLogs: true });
    const n1 = sim.node('node1');
    const n2 = sim.node('node2');
    // initdb takes its time, as a real one does: the loop sees the claim while it runs.
    n1.db.setDelay('initdb', 3000);
    n1.startAgent();
    const failed = failFirstCall(n1.dcs, 'completeInitialize', 'etcd put initialize: no answer within 5000 ms', () => queueMicrotask(() => n1.freezeAgent()));
    await sim.until(() => failed.done, 60_000, 'the initialize write');
    const sysid = n1.db.systemIdentifier;
    n2.startAgent();
    // Longer than a ttl (node1's lock is gone, the claim looks abandoned), shorter than two.
    await sim.advance(45_000);
    expect(sim.view().initialize, 'the claim still empty').to.equal('');
    n1.thawAgent();
    await sim.until(() => sim.primary()?.name === 'node1' && n2.db.isStreaming, 180_000, 'node1 leading again, node2 streaming from it');
    expect(sim.view().initialize).to.equal(sysid);
    expect(n2.db.systemIdentifier, 'node2 cloned node1: no second cluster').to.equal(sysid);
    expect(n1.logger.lines.some((l) => l.msg.includes(`registering the system identifier ${sysid} of the local data in its place`))).to.equal(true);
  });
});

describe('HA scenarios: the DCS lost its keys while every server was down', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('two former replicas, the less advanced one started first: both run read-only while they wait, the more advanced one leads, nothing it held is lost', async () => {
    sim = new SimCluster({ names: ['node1', 'node2', 'node3'], verboseLogs: true, config: { ttl: 30, loop_wait: 10, retry_timeout: 10, primary_start_timeout: 60 } });
    sim.startAll();
    await sim.until(() => sim.primary() !== null && [...sim.nodes.values()].filter((n) => n.db.isStreaming).length === 2, 120_000, 'a primary and two streaming replicas');
    const primary = sim.primary()!;
    const [ahead, behind] = [...sim.nodes.values()].filter((n) => n !== primary);
    for (let i = 0; i < 5; i++) await primary.db.write();
    await sim.advance(2000);
    behind!.db.setReplicationPaused(true);
    const later: number[] = [];
    for (let i = 0; i < 5; i++) later.push(await primary.db.write());
    await sim.until(() => ahead!.db.replayedLsn === primary.db.lsn, 30_000, `${ahead!.name} holding every commit`);
    expect(behind!.db.replayedLsn).to.be.below(ahead!.db.lsn!);
    const held = ahead!.db.writeIds();
    for (const n of sim.nodes.values()) n.crash();
    await sim.wipeDcs();
    expect(sim.store.allKeys()).to.deep.equal([]);
    // The former primary's machine is gone. The more advanced replica's server is slow to start (crash recovery).
    behind!.db.setReplicationPaused(false);
    ahead!.db.setDelay('start', 5000);
    behind!.startAgent();
    await sim.advance(5000);
    ahead!.startAgent();
    await sim.until(() => sim.primary() !== null, 180_000, 'a new primary');
    expect(sim.primary()!.name, 'the member holding more WAL leads').to.equal(ahead!.name);
    await sim.until(() => behind!.db.isStreaming, 120_000, `${behind!.name} streaming from the new primary`);
    const now = sim.primary()!.db.writeIds();
    expect(held.every((id) => now.includes(id)), 'every commit the new primary held before the crash is still there').to.equal(true);
    expect(behind!.logger.lines.some((l) => l.msg.startsWith('starting the local data read-only (no upstream) while waiting for'))).to.equal(true);
  });
});

describe('HA scenarios: a node that waits says for what, once per change', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('nofailover on an empty cluster: /node and the log say it waits for another member to bootstrap; once one does, it clones it', async () => {
    sim = new SimCluster({ names: ['node1', 'node2'], verboseLogs: true, nodes: { node1: { tags: { nofailover: true } } } });
    sim.node('node1').startAgent();
    await sim.advance(60_000);
    const n1 = sim.node('node1');
    expect(n1.loop.snapshot().status.waiting_for).to.equal('another member to bootstrap the cluster: this one is tagged nofailover and never creates it');
    const said = n1.logger.lines.filter((l) => l.level !== 'debug' && l.msg.startsWith('waiting for another member to bootstrap'));
    expect(said).to.have.length(1);
    sim.node('node2').startAgent();
    await sim.until(() => n1.db.isStreaming, 120_000, 'node1 streaming from node2');
    expect(n1.loop.snapshot().status).to.not.have.property('waiting_for');
  });
});

describe('HA scenarios: the post_bootstrap script', () => {
  let sim: SimCluster;
  afterEach(() => sim?.shutdown());

  it('a failing script leaves no cluster (the new data goes, nobody copies it, the claim is dropped) and is retried with growing pauses; fixed, the cluster comes up and the others clone it', async () => {
    const hooks = new FakeHookScripts({ post_bootstrap: 'fails' });
    sim = new SimCluster({ names: ['node1', 'node2', 'node3'], nodes: { node1: { hooks, postBootstrap: true }, node2: { hooks, postBootstrap: true }, node3: { hooks, postBootstrap: true } } });
    sim.startAll();
    const systemIds = new Set<string>();
    const watch = () => {
      for (const n of sim.nodes.values()) if (n.db.isStreaming) systemIds.add(`${n.name} streamed`);
      const init = sim.view().initialize;
      if (init) systemIds.add(`registered ${init}`);
      return false;
    };
    await sim.until(watch, 300_000, 'never').catch(() => undefined);
    expect([...systemIds], 'no cluster registered, no replica of a failed bootstrap').to.deep.equal([]);
    expect(sim.writable()).to.deep.equal([]);
    // Five minutes: an attempt per loop_wait would be 30 per node; with the pauses doubling, 5 per node.
    expect(hooks.runs.length).to.be.within(6, 18);
    const logged = [...sim.nodes.values()].flatMap((n) => n.logger.lines.filter((l) => l.msg.includes('the post_bootstrap script exited with code 1')));
    expect(logged).to.not.be.empty;
    for (const n of sim.nodes.values()) if (!n.db.isRunning) expect(n.db.systemIdentifier, `${n.name}: the failed bootstrap's data removed`).to.equal(null);
    hooks.set('post_bootstrap', 'succeeds');
    await sim.until(() => sim.primary() !== null && [...sim.nodes.values()].filter((n) => n.db.isStreaming).length === 2, 600_000, 'a primary and two streaming replicas');
    const leader = sim.primary()!;
    expect(sim.view().initialize).to.equal(leader.db.systemIdentifier);
    for (const n of sim.nodes.values()) expect(n.db.systemIdentifier).to.equal(leader.db.systemIdentifier);
  });

  it('an agent killed while its script runs: the data it left is never registered; started again, the agent removes it and bootstraps anew', async () => {
    const hooks = new FakeHookScripts({ post_bootstrap: 'hangs' });
    sim = new SimCluster({ names: ['node1', 'node2', 'node3'], verboseLogs: true, nodes: { node1: { hooks, postBootstrap: true }, node2: { hooks, postBootstrap: true }, node3: { hooks, postBootstrap: true } } });
    const n1 = sim.node('node1');
    n1.startAgent();
    await sim.until(() => hooks.runs.length === 1, 60_000, 'the script running');
    const interrupted = n1.db.systemIdentifier;
    expect(interrupted).to.be.a('string');
    n1.killAgent();
    hooks.set('post_bootstrap', 'succeeds');
    await sim.advance(5_000);
    expect(sim.view().initialize, 'never registered').to.equal('');
    n1.startAgent();
    await sim.until(() => sim.primary()?.name === 'node1', 120_000, 'node1 leading a new cluster');
    expect(n1.logger.find('the local data is a new cluster whose bootstrap was interrupted before its post_bootstrap script succeeded and the cluster was registered: removing it')).to.not.be.empty;
    expect(n1.db.systemIdentifier).to.not.equal(interrupted);
    expect(sim.view().initialize).to.equal(n1.db.systemIdentifier);
    expect(hooks.runs.length).to.equal(2);
    sim.node('node2').startAgent();
    sim.node('node3').startAgent();
    await sim.until(() => [...sim.nodes.values()].filter((n) => n.db.isStreaming).length === 2, 120_000, 'two streaming replicas');
  });
});
