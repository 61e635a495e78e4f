/**
 * Member discovery of the JSON gateway client on a real 3-member etcd: configured with one
 * member only, the client learns the others from etcd, so losing the configured member (a
 * member replaced, a host retired) leaves its calls and its watch served by the others.
 */
import { expect } from 'chai';
import { Etcd3GatewayKeyValue } from '../../../../src/adapters/cluster-store/etcd3-gateway-key-value.js';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';
import { DcsUnavailableError } from '../../../../src/domain/errors.js';
import { stopByPid, threeMembersEachTest } from '../../../support/etcd-three-members.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

describe('Etcd3GatewayKeyValue: etcd members learned from the cluster (real 3-member etcd)', function () {
  this.timeout(60_000);
  const etcd = threeMembersEachTest();

  it('configured with one member, it learns the others: calls and the watch go on when that member is gone', async () => {
    const e = etcd();
    const logger = new MemoryLogger();
    const kv = new Etcd3GatewayKeyValue({ hosts: [e.hosts[0]!], prefix: '/service/members/', retryTimeoutMs: 6000, discoverMembers: true, logger });
    const seen: string[] = [];
    try {
      await kv.refreshMembers();
      const said = logger.messages('info').filter((m) => /etcd members learned from the cluster/.test(m));
      expect(said).to.have.length(1);
      kv.watch((key, value) => seen.push(`${key}=${value}`));
      expect(await kv.whenWatching(5000)).to.equal(true);
      await kv.put('config', 'a');
      await stopByPid(e.procs[0]!);
      // A read may be tried on every member until one answers (the others may be electing a new raft leader);
      // a put that got no answer is not sent again, so it comes after.
      expect((await kv.readAll()).get('config')?.value).to.equal('a');
      await kv.put('config', 'b');
      expect((await kv.readAll()).get('config')?.value).to.equal('b');
      // The watch's stream ended with the member; it reopens on another (a new stream: '=null', the reader reads
      // again) and reports the changes after it.
      const reopened = () => seen.filter((s) => s === '=null').length >= 2;
      const until = Date.now() + 10_000;
      while (!reopened() && Date.now() < until) await sleep(100);
      expect(reopened(), 'the stream reopened on another member').to.equal(true);
      await kv.put('config', 'c');
      while (!seen.includes('config=c') && Date.now() < until + 5000) await sleep(50);
      expect(seen).to.include('config=c');
      await kv.refreshMembers();
      expect(logger.messages('info').filter((m) => /etcd members learned/.test(m)), 'the same members: nothing new to say').to.have.length(1);
    } finally {
      await kv.close();
    }
  });

  it('without discovery (the hosts are proxies) only the configured member is called', async () => {
    const e = etcd();
    const kv = new Etcd3GatewayKeyValue({ hosts: [e.hosts[0]!], prefix: '/service/members/', retryTimeoutMs: 2000 });
    try {
      await kv.put('config', 'a');
      await stopByPid(e.procs[0]!);
      const error = await kv.readAll().then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).to.be.instanceOf(DcsUnavailableError);
    } finally {
      await kv.close();
    }
  });
});
