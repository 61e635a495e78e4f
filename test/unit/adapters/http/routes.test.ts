import { expect } from 'chai';
import { RouteTable } from '../../../../src/adapters/http/routes.js';

describe('REST API: route table', () => {
  const a = () => {};
  const b = () => {};
  const routes = new RouteTable().get('/config', a).add('/config', ['PATCH'], b).add('/config', ['PUT'], b).add('/switchover', ['POST', 'DELETE'], a);

  it('finds a path whatever its case and with one trailing slash; HEAD runs GET', () => {
    for (const path of ['/config', '/CONFIG', '/config/']) expect(routes.match('GET', path), path).to.deep.equal({ kind: 'handlers', handlers: [a] });
    expect(routes.match('HEAD', '/config')).to.deep.equal({ kind: 'handlers', handlers: [a] });
    expect(routes.match('GET', '//config').kind).to.equal('not_found');
    expect(routes.match('GET', '/config//').kind).to.equal('not_found');
  });

  it('another method: not allowed, with Allow in the usual order and OPTIONS', () => {
    expect(routes.match('POST', '/config')).to.deep.equal({ kind: 'not_allowed', allow: 'GET, HEAD, PUT, PATCH, OPTIONS' });
    expect(routes.match('GET', '/switchover')).to.deep.equal({ kind: 'not_allowed', allow: 'POST, DELETE, OPTIONS' });
    expect(routes.match('OPTIONS', '/switchover').kind).to.equal('not_allowed');
  });
});
