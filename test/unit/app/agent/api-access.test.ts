import { expect } from 'chai';
import { AllowlistNames } from '../../../../src/adapters/http/allowlist-names.js';
import { apiAccess, memberApiHosts } from '../../../../src/app/agent/api-access.js';
import { parseLocalConfig } from '../../../../src/app/agent/local-config.js';
import type { LocalConfig } from '../../../../src/app/agent/local-config-types.js';
import { ListLogger } from '../../adapters/http/support.js';
import { MINIMAL_NODE_YAML } from '../../../support/node-config-yaml.js';

const FILE = MINIMAL_NODE_YAML.replace('restapi: {listen: 127.0.0.1:8008}', 'restapi: {listen: 127.0.0.1:8008, allowlist: [10.0.0.0/8, lb.example.org]}');

const dns = new Map<string, readonly string[]>([
  ['lb.example.org', ['192.168.5.5']],
  ['node3.example.org', ['192.168.7.3']],
]);
const lookup = async (name: string) => {
  const a = dns.get(name);
  if (!a) throw new Error(`getaddrinfo ENOTFOUND ${name}`);
  return a;
};

describe('the REST API access settings of the agent', () => {
  it("members' API hosts: from their URLs, IPv6 without brackets, no repeats, unusable URLs skipped", () => {
    expect(memberApiHosts(['http://10.0.0.12:8008', 'https://[fd00::3]:8008', 'http://10.0.0.12:8009', 'not a url', 'http://node3.example.org:8008'])).to.deep.equal([
      '10.0.0.12',
      'fd00::3',
      'node3.example.org',
    ]);
  });

  it("without allowlist_include_members: the file's entries, names with the addresses they resolved to", async () => {
    const local: LocalConfig = parseLocalConfig(FILE);
    const names = new AllowlistNames(new ListLogger(), lookup, 0);
    const access = apiAccess(() => local, names, () => ['http://10.0.0.12:8008']);
    const first = access();
    expect(first.allowlist).to.deep.equal(['10.0.0.0/8', 'lb.example.org']);
    expect(first.allowlistRequired).to.equal(false);
    expect(first.addressesOf!('lb.example.org')).to.deep.equal([]);
    await names.refresh();
    const resolved = access();
    expect(resolved, 'a name resolved: the check is rebuilt').to.not.equal(first);
    expect(resolved.addressesOf!('lb.example.org')).to.deep.equal(['192.168.5.5']);
    expect(access(), 'nothing changed: the same settings').to.equal(resolved);
  });

  it('with allowlist_include_members: the members the cluster lists now are added, and required even with none', async () => {
    const local: LocalConfig = parseLocalConfig(FILE.replace('allowlist: [10.0.0.0/8, lb.example.org]', 'allowlist_include_members: true'));
    let members: string[] = [];
    const names = new AllowlistNames(new ListLogger(), lookup, 0);
    const access = apiAccess(() => local, names, () => members);
    expect(access()).to.deep.include({ allowlist: [], allowlistRequired: true });
    members = ['http://10.0.0.11:8008', 'http://10.0.0.12:8008'];
    expect(access().allowlist).to.deep.equal(['10.0.0.11', '10.0.0.12']);
    members = [...members, 'http://node3.example.org:8008'];
    expect(access().allowlist).to.deep.equal(['10.0.0.11', '10.0.0.12', 'node3.example.org']);
    await names.refresh();
    expect(access().addressesOf!('node3.example.org')).to.deep.equal(['192.168.7.3']);
  });
});
