import { expect } from 'chai';
import { InMemoryClusterStore } from '../../../src/adapters/cluster-store/in-memory-cluster-store.js';
import { InMemoryKeyValueSpace } from '../../../src/adapters/cluster-store/in-memory-key-value.js';
import { FakeClock } from '../../../src/adapters/clock/fake-clock.js';
import { ValidationError } from '../../../src/domain/errors.js';
import { demoteCluster, promoteCluster } from '../../../src/usecases/cluster-role.js';
import { CommandError } from '../../../src/usecases/command-error.js';

async function store(config: Record<string, unknown>, leader = true) {
  const space = new InMemoryKeyValueSpace(new FakeClock(Date.UTC(2024, 0, 1)));
  const s = new InMemoryClusterStore(space, { clientId: 'ctl' });
  await s.writeConfig(config, null);
  if (leader) await s.acquireLeader('node1', 30);
  return s;
}

async function refusal(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a refusal');
}

describe('usecases: promoteCluster / demoteCluster', () => {
  it('promoteCluster removes standby_cluster (the rest stays) and names the leader that promotes', async () => {
    const s = await store({ ttl: 30, standby_cluster: { host: 'dc1', port: 5432 } });
    const r = await promoteCluster({ store: s, agent: null });
    expect(r).to.deep.equal({ config: { ttl: 30 }, leader: 'node1' });
    expect((await s.read()).config?.value).to.deep.equal({ ttl: 30 });
  });

  it('promoteCluster refuses a primary cluster and a cluster without a leader', async () => {
    const e = await refusal(promoteCluster({ store: await store({ ttl: 30 }), agent: null }));
    expect(e).to.be.instanceOf(CommandError);
    expect((e as CommandError).code).to.equal('not_standby_cluster');
    expect(((await refusal(promoteCluster({ store: await store({ standby_cluster: { host: 'h' } }, false), agent: null }))) as CommandError).code).to.equal('no_leader');
  });

  it('demoteCluster sets standby_cluster (without absent fields) and names the leader that becomes the standby leader', async () => {
    const s = await store({ ttl: 30 });
    const r = await demoteCluster({ store: s, agent: null }, { host: 'dc2', port: 5433, primary_slot_name: undefined as unknown as string });
    expect(r.leader).to.equal('node1');
    expect((await s.read()).config?.value).to.deep.equal({ ttl: 30, standby_cluster: { host: 'dc2', port: 5433 } });
  });

  it('demoteCluster refuses a standby cluster, and an invalid standby_cluster writes nothing', async () => {
    expect(((await refusal(demoteCluster({ store: await store({ standby_cluster: { host: 'h' } }), agent: null }, { host: 'x' }))) as CommandError).code).to.equal('already_standby_cluster');
    const s = await store({ ttl: 30 });
    const e = await refusal(demoteCluster({ store: s, agent: null }, { port: 5432 }));
    expect(e).to.be.instanceOf(ValidationError);
    expect(e.message).to.match(/standby_cluster: expected host or restore_command/);
    expect((await s.read()).config?.value).to.deep.equal({ ttl: 30 });
  });

  it('a concurrent change of the configuration is refused, not overwritten', async () => {
    const s = await store({ ttl: 30 });
    // Simulate the race: the stored revision moves between the read and the write.
    const read = s.read.bind(s);
    let first = true;
    s.read = async () => {
      const c = await read();
      if (first) {
        first = false;
        await s.writeConfig({ ttl: 40 }, c.config?.revision ?? null);
      }
      return c;
    };
    expect(((await refusal(demoteCluster({ store: s, agent: null }, { host: 'h' }))) as CommandError).code).to.equal('config_conflict');
  });
});
