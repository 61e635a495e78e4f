import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpRestClient, responseMessage } from '../../../../src/app/ctl/rest-client.js';
import { failure } from './failure.js';

describe('ctl HttpRestClient', () => {
  let server: Server;
  let base = '';
  const seen: { method?: string; url?: string; auth?: string; type?: string; body: string }[] = [];
  let handler: (req: IncomingMessage, body: string) => { status: number; body: string; delayMs?: number };

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, auth: req.headers.authorization, type: req.headers['content-type'], body });
        const a = handler(req, body);
        setTimeout(() => {
          res.writeHead(a.status, { 'content-type': 'application/json' });
          res.end(a.body);
        }, a.delayMs ?? 0);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));
  beforeEach(() => (seen.length = 0));

  it('sends JSON with Basic auth and parses the JSON answer, whatever the status', async () => {
    handler = () => ({ status: 412, body: '{"error":"x","message":"not eligible"}' });
    const client = new HttpRestClient({ username: 'admin', password: 'secret' });
    const res = await client.request(base, 'POST', 'switchover', { leader: 'node1' });
    expect(res).to.deep.equal({ status: 412, body: { error: 'x', message: 'not eligible' } });
    expect(responseMessage(res)).to.equal('not eligible');
    expect(seen[0]).to.deep.equal({ method: 'POST', url: '/switchover', auth: `Basic ${Buffer.from('admin:secret').toString('base64')}`, type: 'application/json', body: '{"leader":"node1"}' });
  });

  it('no auth header without credentials; a non-JSON body comes back as text; api_url with a trailing slash', async () => {
    handler = () => ({ status: 200, body: 'plain text' });
    const res = await new HttpRestClient().request(`${base}/`, 'GET', 'node');
    expect(res.body).to.equal('plain text');
    expect(seen[0]!.auth).to.equal(undefined);
    expect(seen[0]!.url).to.equal('/node');
    expect(responseMessage({ status: 500, body: null })).to.equal('HTTP 500');
  });

  it('times out with RestUnreachableError', async () => {
    handler = () => ({ status: 200, body: '{}', delayMs: 300 });
    const err = await failure(new HttpRestClient().request(base, 'GET', 'node', undefined, { timeoutMs: 50 }));
    expect(err.code).to.equal('api_unreachable');
    expect(err.message).to.match(/^GET http:\/\/127\.0\.0\.1:\d+\/node: no answer within 50ms$/);
  });

  it('a refused connection is RestUnreachableError naming the URL', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const err = await failure(new HttpRestClient().request(`http://127.0.0.1:${port}`, 'POST', 'reload'));
    expect(err.code).to.equal('api_unreachable');
    expect(err.message).to.match(new RegExp(`^POST http://127\\.0\\.0\\.1:${port}/reload: .*ECONNREFUSED`));
  });
});
