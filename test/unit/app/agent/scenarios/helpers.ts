import { expect } from 'chai';
import { SimCluster, type SimClusterOptions, type SimNode } from '../../../../sim/sim-cluster.js';

/** A cluster bootstrapped with `first` as leader (it starts alone), every other node streaming from it. */
export async function healthyCluster(opts: SimClusterOptions & { readonly first?: string }): Promise<SimCluster> {
  const sim = new SimCluster(opts);
  const first = opts.first ?? opts.names[0]!;
  sim.startAll([first]);
  await sim.until(() => sim.primary()?.name === first, 60_000, `${first} to bootstrap`);
  sim.startAll();
  await sim.until(() => replicasStreaming(sim) === opts.names.length - 1, 120_000, 'every replica streaming');
  // One more loop so that member keys and the sync key reflect the streaming replicas.
  await sim.advance(2 * loopWaitMs(sim));
  return sim;
}

/** How many nodes stream from an upstream. */
export function replicasStreaming(sim: SimCluster): number {
  return [...sim.nodes.values()].filter((n) => n.db.isStreaming).length;
}

/** loop_wait of the simulated cluster, ms. */
export function loopWaitMs(sim: SimCluster): number {
  return Number(sim.config['loop_wait'] ?? 10) * 1000;
}

/** ttl of the simulated cluster, ms. */
export function ttlMs(sim: SimCluster): number {
  return Number(sim.config['ttl'] ?? 30) * 1000;
}

/** Commits `count` client writes on the node (resolves once each is acknowledged). */
export async function write(node: SimNode, count = 1): Promise<void> {
  for (let i = 0; i < count; i++) await node.db.write(1024);
}

/** Names of nodes that hold the lock and accept writes. */
export function primaryName(sim: SimCluster): string | null {
  return sim.primary()?.name ?? null;
}

/**
 * Revokes the leader's lease while `primary` commits every 10 ms and the replicas answer the
 * race 50 ms after they are asked; asserts over the next 3 s that `primary` alone writes, and that
 * it holds the key again.
 */
export async function leaseRevokedWhileWriting(sim: SimCluster, primary: string): Promise<void> {
  for (const n of sim.nodes.values()) if (n.name !== primary) n.db.setDelay('probe', 50);
  let writing = true;
  const writer = (async () => {
    while (writing) {
      await sim.node(primary).db.write(128).catch(() => undefined);
      await sim.clock.sleep(10);
    }
  })();
  try {
    await sim.advance(200);
    sim.store.revokeLeasesEarly('leader');
    for (let t = 0; t < 3000; t += 10) {
      await sim.advance(10);
      expect(sim.writable().map((n) => n.name), `${primary} alone writes, ${t} ms after the revocation`).to.deep.equal([primary]);
    }
  } finally {
    writing = false;
    await sim.advance(20);
    await writer;
  }
  expect(sim.leaderKey()).to.equal(primary);
}
