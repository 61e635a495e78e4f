import { expect } from 'chai';
import { RequestTargets, requestTarget } from '../../../../src/adapters/http/request-targets.js';

describe('requestTarget', () => {
  it('gives the options http.request takes: host without brackets, port, credentials, and the path to append to', () => {
    expect(requestTarget('http://127.0.0.1:8008')).to.deep.equal({ secure: false, options: { protocol: 'http:', hostname: '127.0.0.1', port: 8008 }, basePath: '/' });
    expect(requestTarget('https://[::1]:8443/warden')).to.deep.equal({ secure: true, options: { protocol: 'https:', hostname: '::1', port: 8443 }, basePath: '/warden/' });
    expect(requestTarget('http://u:p%40ss@h/')).to.deep.equal({ secure: false, options: { protocol: 'http:', hostname: 'h', auth: 'u:p@ss' }, basePath: '/' });
  });

  it('is null for what is not an http(s) URL', () => {
    expect(requestTarget('postgres://h:5432/db')).to.equal(null);
    expect(requestTarget('no url')).to.equal(null);
  });
});

describe('RequestTargets', () => {
  it('parses an address once and keeps at most 64', () => {
    const targets = new RequestTargets();
    const first = targets.of('http://10.0.0.1:8008');
    expect(targets.of('http://10.0.0.1:8008')).to.equal(first);
    for (let i = 2; i <= 64; i++) targets.of(`http://10.0.0.${i}:8008`);
    expect(targets.of('http://10.0.0.1:8008'), 'still kept with 64').to.equal(first);
    targets.of('http://10.0.1.1:8008');
    const again = targets.of('http://10.0.0.1:8008');
    expect(again, 'parsed again after the bound cleared the map').to.not.equal(first);
    expect(again).to.deep.equal(first);
  });
});
