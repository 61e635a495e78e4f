import { SystemClock } from '../../../../src/adapters/clock/system-clock.js';
import { FakeDatabase, FakeDatabaseNetwork } from '../../../../src/adapters/database/fake-database.js';
import { databaseContract, type ContractNode } from '../../../contract/database-contract.js';

databaseContract('FakeDatabase', async () => {
  const network = new FakeDatabaseNetwork();
  const clock = new SystemClock();
  const fakes = new Map<string, FakeDatabase>();
  return {
    major: 15,
    unreachable: { name: 'nobody', connUrl: 'postgres://127.0.0.1:1/postgres' },
    async node(name): Promise<ContractNode> {
      const connUrl = `postgres://${name}:5432/postgres`;
      const db = new FakeDatabase({ name, connUrl, network, clock });
      fakes.set(name, db);
      return { name, db, upstream: { name, connUrl } };
    },
    async write(n) {
      await fakes.get(n.name)!.write();
    },
    async settle() {
      network.replicate();
    },
    async crash(n) {
      fakes.get(n.name)!.crash();
    },
    async cleanup() {},
  };
});
