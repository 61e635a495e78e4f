import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { databaseContract, type ContractNode } from '../../../contract/database-contract.js';
import { destroyNodes, makeNode, sql, type TestNode } from './pg-test-nodes.js';

const creds = { superuser: { username: 'postgres', password: 'contract-su' }, replication: { username: 'replicator', password: 'contract-rep' } };

databaseContract('PgDatabase on PostgreSQL 15', async () => {
  const nodes = new Map<string, TestNode>();
  return {
    major: 15,
    unreachable: { name: 'nobody', connUrl: 'postgres://127.0.0.1:1/postgres' },
    async node(name): Promise<ContractNode> {
      const n = await makeNode(name, creds);
      nodes.set(name, n);
      return { name, db: n.db, upstream: { name, connUrl: n.connUrl } };
    },
    async write(n) {
      await sql(nodes.get(n.name)!, 'CREATE TABLE IF NOT EXISTS contract_rows (x serial); INSERT INTO contract_rows DEFAULT VALUES');
    },
    async settle() {},
    async crash(n) {
      const pid = Number((await readFile(join(nodes.get(n.name)!.dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
      process.kill(pid, 'SIGKILL');
    },
    cleanup: destroyNodes,
  };
});
