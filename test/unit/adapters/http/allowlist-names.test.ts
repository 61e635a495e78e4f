import { expect } from 'chai';
import { AllowlistNames } from '../../../../src/adapters/http/allowlist-names.js';
import { ListLogger } from './support.js';

/** A DNS whose answers the test sets; a missing name fails as an unknown host does. */
function fakeDns() {
  const answers = new Map<string, readonly string[]>();
  const asked: string[] = [];
  const lookup = async (name: string) => {
    asked.push(name);
    const a = answers.get(name);
    if (!a) throw new Error(`getaddrinfo ENOTFOUND ${name}`);
    return a;
  };
  return { answers, asked, lookup };
}

describe('allowlist host names', () => {
  it('resolves only the names (not addresses or ranges), and each address change moves the version', async () => {
    const dns = fakeDns();
    dns.answers.set('lb1.example.org', ['10.0.0.7', '10.0.0.5']);
    const names = new AllowlistNames(new ListLogger(), dns.lookup, 0);
    const v0 = names.version;
    await names.follow(['10.0.0.0/8', '::1', 'lb1.example.org', '192.168.1.1']);
    expect(dns.asked).to.deep.equal(['lb1.example.org']);
    expect(names.addressesOf('lb1.example.org')).to.deep.equal(['10.0.0.5', '10.0.0.7']);
    expect(names.version).to.be.above(v0);
    const v1 = names.version;
    await names.refresh();
    expect(names.version, 'same answer: nothing to rebuild').to.equal(v1);
    dns.answers.set('lb1.example.org', ['10.0.0.9']);
    await names.refresh();
    expect(names.addressesOf('lb1.example.org')).to.deep.equal(['10.0.0.9']);
    expect(names.version).to.be.above(v1);
    // The same entries again (a reload that changed something else): not resolved again.
    dns.asked.length = 0;
    await names.follow(['10.0.0.0/8', '::1', 'lb1.example.org', '192.168.1.1']);
    expect(dns.asked).to.deep.equal([]);
  });

  it('a name that never resolved allows nothing; one that stops resolving keeps its last addresses; said once each way', async () => {
    const dns = fakeDns();
    const logger = new ListLogger();
    const names = new AllowlistNames(logger, dns.lookup, 0);
    await names.follow(['lb1.example.org']);
    expect(names.addressesOf('lb1.example.org')).to.deep.equal([]);
    await names.refresh();
    expect(logger.lines.map((l) => [l.level, l.msg])).to.deep.equal([['warn', 'restapi.allowlist: the host name lb1.example.org does not resolve: it allows no address until it does']]);
    expect(logger.lines[0]!.fields).to.deep.equal({ error: 'getaddrinfo ENOTFOUND lb1.example.org' });
    dns.answers.set('lb1.example.org', ['10.0.0.7']);
    await names.refresh();
    expect(names.addressesOf('lb1.example.org')).to.deep.equal(['10.0.0.7']);
    dns.answers.delete('lb1.example.org');
    await names.refresh();
    await names.refresh();
    expect(names.addressesOf('lb1.example.org')).to.deep.equal(['10.0.0.7']);
    expect(logger.lines.map((l) => l.msg).slice(1)).to.deep.equal([
      'restapi.allowlist: the host name lb1.example.org resolves again',
      'restapi.allowlist: lb1.example.org allows 10.0.0.7',
      'restapi.allowlist: the host name lb1.example.org does not resolve: its last addresses (10.0.0.7) stay allowed until it does',
    ]);
  });

  it('a name taken out of the allowlist by a reload allows nothing any more', async () => {
    const dns = fakeDns();
    dns.answers.set('lb1.example.org', ['10.0.0.7']);
    dns.answers.set('lb2.example.org', ['10.0.0.8']);
    const names = new AllowlistNames(new ListLogger(), dns.lookup, 0);
    await names.follow(['lb1.example.org', 'lb2.example.org']);
    await names.follow(['lb2.example.org']);
    expect(names.addressesOf('lb1.example.org')).to.deep.equal([]);
    expect(names.addressesOf('lb2.example.org')).to.deep.equal(['10.0.0.8']);
  });

  it('a failing name taken out and put back by reloads is said again', async () => {
    const dns = fakeDns();
    const logger = new ListLogger();
    const names = new AllowlistNames(logger, dns.lookup, 0);
    await names.follow(['gone.example.org']);
    await names.follow([]);
    await names.follow(['gone.example.org']);
    expect(logger.lines.filter((l) => l.level === 'warn')).to.have.length(2);
  });

  it('the system resolver: localhost resolves to loopback', async () => {
    const names = new AllowlistNames(new ListLogger());
    await names.follow(['localhost']);
    expect(names.addressesOf('localhost').some((a) => a === '127.0.0.1' || a === '::1')).to.equal(true);
  });
});
