import { expect } from 'chai';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { requestTarget, splitOriginForm } from '../../../../src/adapters/http/health-fast-path.js';
import { ResponseHeaders } from '../../../../src/adapters/http/response-headers.js';
import { primaryFacts, replicaFacts, snapshot, startApi, type ApiHarness } from './support.js';

/** One request over node:http: status, raw header list (order and case as sent), body. */
function rawRequest(url: string, method: string, path: string): Promise<{ status: number; rawHeaders: string[]; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url + path, { method }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The raw bytes answered to a request line sent as is (request targets fetch would normalise). */
function rawExchange(url: string, requestText: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(port), '127.0.0.1');
    let text = '';
    s.on('data', (d: Buffer) => (text += d.toString('latin1')));
    s.on('error', reject);
    s.on('end', () => resolve(text));
    s.write(requestText);
  });
}

/** Header names in the order sent, with the Date and connection headers node adds left out. */
function ownHeaders(raw: string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (!/^(date|connection|keep-alive)$/i.test(raw[i]!)) out.push([raw[i]!, raw[i + 1]!]);
  }
  return out;
}

describe('REST API: health fast path in front of the route table', () => {
  describe('splitOriginForm', () => {
    it('splits at the first "?" and leaves other forms to the URL parser', () => {
      expect(splitOriginForm('/primary')).to.deep.equal({ path: '/primary', query: '' });
      expect(splitOriginForm('/replica?lag=1MB&tag_dc=a?b')).to.deep.equal({ path: '/replica', query: 'lag=1MB&tag_dc=a?b' });
      expect(splitOriginForm('/primary?')).to.deep.equal({ path: '/primary', query: '' });
      expect(splitOriginForm('http://h/primary')).to.equal(null);
      expect(splitOriginForm('*')).to.equal(null);
      expect(splitOriginForm('/primary#x')).to.equal(null);
    });
  });

  describe('requestTarget', () => {
    it('any target the HTTP parser lets through: the path and query of an absolute form whatever its authority; never throws', () => {
      expect(requestTarget('/replica?lag=1MB')).to.deep.equal({ path: '/replica', query: 'lag=1MB' });
      expect(requestTarget('http://h:8008/replica?lag=1MB#x')).to.deep.equal({ path: '/replica', query: 'lag=1MB' });
      expect(requestTarget('HTTPS://h')).to.deep.equal({ path: '/', query: '' });
      expect(requestTarget('/primary#frag?x')).to.deep.equal({ path: '/primary', query: '' });
      // node's URL parser threw ERR_INVALID_URL on these, out of the request listener: the process died.
      expect(requestTarget('http://[::1/primary')).to.deep.equal({ path: '/primary', query: '' });
      expect(requestTarget('http://xn--/reload?x=1')).to.deep.equal({ path: '/reload', query: 'x=1' });
      expect(requestTarget('*')).to.deep.equal({ path: '*', query: '' });
      expect(requestTarget('http:x')).to.deep.equal({ path: 'http:x', query: '' });
    });

    it('a malformed absolute-form target is answered, and the agent goes on answering (it crashed the process)', async () => {
      const api = await startApi({ snapshot: snapshot({ facts: primaryFacts(), leader: true }) });
      try {
        for (const target of ['http://[::1/primary', 'http://xn--/primary', 'https://[fe80::1%25eth0]/primary']) {
          const text = await rawExchange(api.url, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
          expect(text, target).to.match(/^HTTP\/1\.1 200 OK\r\n/);
        }
        const unknown = await rawExchange(api.url, `POST http://[::1/nope HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
        expect(unknown).to.match(/^HTTP\/1\.1 404 /);
        expect(JSON.parse(unknown.slice(unknown.indexOf('\r\n\r\n') + 4))).to.deep.equal({ error: 'not_found', message: 'no such endpoint: /nope' });
        expect((await api.request('GET', '/node')).status).to.equal(200);
      } finally {
        await api.close();
      }
    });
  });

  describe('ResponseHeaders', () => {
    it('replaces a header of the same name in place, whatever its case; remove then set moves it last', () => {
      const h = new ResponseHeaders({ 'content-type': 'text/plain', 'X-A': '1' }).set('Content-Type', 'application/json').set('X-B', '2');
      expect(h.list()).to.deep.equal(['Content-Type', 'application/json', 'X-A', '1', 'X-B', '2']);
      expect(h.remove('x-a').set('X-A', '3').list()).to.deep.equal(['Content-Type', 'application/json', 'X-B', '2', 'X-A', '3']);
    });
  });

  describe('answers', () => {
    let api: ApiHarness;
    let extra: Record<string, string> = { 'X-Frame-Options': 'DENY', 'content-type': 'text/plain' };
    before(async () => {
      api = await startApi({ snapshot: snapshot({ facts: primaryFacts(), leader: true }), extraHeaders: () => extra });
    });
    after(() => api.close());

    it('GET: extra headers first, then the response own Content-Type (replacing the extra one in place) and Content-Length', async () => {
      const res = await rawRequest(api.url, 'GET', '/primary');
      expect(res.status).to.equal(200);
      expect(ownHeaders(res.rawHeaders)).to.deep.equal([
        ['X-Frame-Options', 'DENY'],
        ['Content-Type', 'application/json; charset=utf-8'],
        ['Content-Length', String(res.body.length)],
      ]);
      expect(JSON.parse(res.body.toString('utf8')).role).to.equal('primary');
    });

    it('HEAD sends the GET headers without a body; OPTIONS sends Content-Length 0 and no Content-Type', async () => {
      const get = await rawRequest(api.url, 'GET', '/primary');
      const head = await rawRequest(api.url, 'HEAD', '/primary');
      expect(ownHeaders(head.rawHeaders)).to.deep.equal(ownHeaders(get.rawHeaders));
      expect(head.body.length).to.equal(0);
      const options = await rawRequest(api.url, 'OPTIONS', '/replica');
      expect(options.status).to.equal(503);
      expect(ownHeaders(options.rawHeaders)).to.deep.equal([
        ['X-Frame-Options', 'DENY'],
        ['Content-Length', '0'],
      ]);
    });

    it('a reloaded http_extra_headers applies to the next request', async () => {
      extra = { 'X-Cluster': 'demo' };
      const res = await rawRequest(api.url, 'GET', '/node');
      expect(ownHeaders(res.rawHeaders)[0]).to.deep.equal(['X-Cluster', 'demo']);
      expect(res.rawHeaders).not.to.include('X-Frame-Options');
    });

    it('a status document with non-ASCII text is sent as its UTF-8 bytes, Content-Length counting bytes', async () => {
      api.control.snap = snapshot({ facts: replicaFacts(), node: { tags: { dc: 'Zürich ☃ 東京' } } });
      const res = await rawRequest(api.url, 'GET', '/replica?tag_dc=' + encodeURIComponent('Zürich ☃ 東京'));
      expect(res.status).to.equal(200);
      const length = ownHeaders(res.rawHeaders).find(([n]) => n === 'Content-Length')![1];
      expect(Number(length)).to.equal(res.body.length);
      expect(JSON.parse(res.body.toString('utf8')).tags).to.deep.equal({ dc: 'Zürich ☃ 東京' });
    });

    it('request targets only the URL parser splits (absolute form, a fragment) get the same answer', async () => {
      api.control.snap = snapshot({ facts: primaryFacts(), leader: true });
      const direct = await rawRequest(api.url, 'GET', '/primary');
      for (const target of [`${api.url}/primary`, '/primary#frag']) {
        const text = await rawExchange(api.url, `GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
        expect(text, target).to.match(/^HTTP\/1\.1 200 OK\r\n/);
        expect(text.slice(text.indexOf('\r\n\r\n') + 4), target).to.equal(direct.body.toString('latin1'));
      }
      const replica = await rawExchange(api.url, `GET ${api.url}/replica HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(replica).to.match(/^HTTP\/1\.1 503 /);
    });

    it('other paths go to the route table: 404, 405 on /node, OPTIONS /node 204', async () => {
      expect((await api.request('GET', '/nope')).status).to.equal(404);
      const post = await api.request('POST', '/node');
      expect(post.status).to.equal(405);
      expect(post.headers.get('allow')).to.equal('GET, HEAD, OPTIONS');
      expect((await api.request('OPTIONS', '/node')).status).to.equal(204);
    });
  });
});
