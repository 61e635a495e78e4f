import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HttpPeerApi } from '../../../../src/adapters/peer/http-peer-api.js';

const STATUS = { state: 'running', role: 'replica', xlog: { received_location: 1, replayed_location: 1, replayed_timestamp: null, paused: false }, svc: { version: '0.1.0', scope: 'demo', name: 'b' } };

type Handler = (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void;

function listen(server: http.Server | https.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

function collect(handler: Handler): http.RequestListener {
  return (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handler(req, Buffer.concat(chunks).toString(), res));
  };
}

describe('HttpPeerApi', () => {
  let server: http.Server;
  let base: string;
  let handler: Handler;
  let api: HttpPeerApi;

  before(async () => {
    server = http.createServer(collect((req, body, res) => handler(req, body, res)));
    base = `http://127.0.0.1:${await listen(server)}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  beforeEach(() => {
    api = new HttpPeerApi();
  });
  afterEach(() => api.close());

  it('fetchStatus returns the /node document on 200', async () => {
    handler = (req, _b, res) => {
      expect(req.method).to.equal('GET');
      expect(req.url).to.equal('/node');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(STATUS));
    };
    expect(await api.fetchStatus(base, 1000)).to.deep.equal(STATUS);
    expect(await api.fetchStatus(`${base}/`, 1000), 'trailing slash').to.deep.equal(STATUS);
  });

  it('an api_url with a path (a proxy\'s prefix) is asked below it; one that is not http(s) or not a URL is asked nothing', async () => {
    const urls: string[] = [];
    handler = (req, _b, res) => {
      urls.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(STATUS));
    };
    expect(await api.fetchStatus(`${base}/warden`, 1000)).to.deep.equal(STATUS);
    expect(await api.fetchStatus(`${base}/warden/`, 1000, { fresh: true })).to.deep.equal(STATUS);
    expect(await api.fetchStatus('ftp://127.0.0.1:1', 1000)).to.equal(null);
    expect(await api.fetchStatus('not a url', 1000)).to.equal(null);
    expect(urls).to.deep.equal(['/warden/node', '/warden/node?fresh=true']);
  });

  it('fetchStatus with fresh asks /node?fresh=true, and an agent that refuses the query (an earlier version) for its published /node', async () => {
    const urls: string[] = [];
    handler = (req, _b, res) => {
      urls.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(STATUS));
    };
    expect(await api.fetchStatus(base, 1000, { fresh: true })).to.deep.equal(STATUS);
    expect(urls).to.deep.equal(['/node?fresh=true']);
    urls.length = 0;
    handler = (req, _b, res) => {
      urls.push(req.url ?? '');
      if (req.url !== '/node') res.writeHead(400, { 'content-type': 'application/json' }).end('{"code":"invalid_query"}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(STATUS));
    };
    expect(await api.fetchStatus(base, 1000, { fresh: true })).to.deep.equal(STATUS);
    expect(urls).to.deep.equal(['/node?fresh=true', '/node']);
    urls.length = 0;
    handler = (req, _b, res) => {
      urls.push(req.url ?? '');
      res.writeHead(503).end(JSON.stringify(STATUS));
    };
    expect(await api.fetchStatus(base, 1000, { fresh: true }), 'no second try on other refusals').to.equal(null);
    expect(urls).to.deep.equal(['/node?fresh=true']);
  });

  it('fetchStatus is null on a non-200, invalid JSON, a non-document, or a refused connection', async () => {
    handler = (_r, _b, res) => res.writeHead(503).end(JSON.stringify(STATUS));
    expect(await api.fetchStatus(base, 1000)).to.equal(null);
    handler = (_r, _b, res) => res.writeHead(200).end('{not json');
    expect(await api.fetchStatus(base, 1000)).to.equal(null);
    handler = (_r, _b, res) => res.writeHead(200).end('[1,2]');
    expect(await api.fetchStatus(base, 1000)).to.equal(null);
    const closed = http.createServer();
    const port = await listen(closed);
    await new Promise((r) => closed.close(r));
    expect(await api.fetchStatus(`http://127.0.0.1:${port}`, 1000)).to.equal(null);
    expect(await api.fetchStatus('not a url', 1000)).to.equal(null);
    expect(await api.fetchStatus('ftp://127.0.0.1:1', 1000)).to.equal(null);
  });

  it('fetchStatus gives up after timeoutMs on a slow peer', async () => {
    handler = (_r, _b, res) => {
      setTimeout(() => res.writeHead(200).end(JSON.stringify(STATUS)), 1000).unref();
    };
    const t0 = Date.now();
    expect(await api.fetchStatus(base, 100)).to.equal(null);
    expect(Date.now() - t0).to.be.lessThan(600);
  });

  it('a peer that stalls mid-body also times out', async () => {
    handler = (_r, _b, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"state":');
    };
    const t0 = Date.now();
    expect(await api.fetchStatus(base, 150)).to.equal(null);
    expect(Date.now() - t0).to.be.lessThan(600);
  });

  it('a body over the size cap counts as a failure', async () => {
    const small = new HttpPeerApi({ maxBodyBytes: 100 });
    handler = (_r, _b, res) => res.writeHead(200).end(JSON.stringify({ ...STATUS, pad: 'x'.repeat(500) }));
    expect(await small.fetchStatus(base, 1000)).to.equal(null);
    small.close();
  });

  it('postFailsafe posts the JSON body with Basic auth and is true only on 200', async () => {
    const authed = new HttpPeerApi({ auth: { username: 'admin', password: 'sécret' } });
    let seen: { auth?: string | undefined; body?: unknown; type?: string | undefined } = {};
    handler = (req, body, res) => {
      seen = { auth: req.headers.authorization, body: JSON.parse(body), type: req.headers['content-type'] };
      res.writeHead(req.headers.authorization === `Basic ${Buffer.from('admin:sécret').toString('base64')}` ? 200 : 401).end('{}');
    };
    const body = { name: 'a', members: { a: 'http://a:8008', b: 'http://b:8008' } };
    expect(await authed.postFailsafe(base, body, 1000)).to.equal(true);
    expect(seen.body).to.deep.equal(body);
    expect(seen.type).to.equal('application/json');
    expect(await api.postFailsafe(base, body, 1000), 'without credentials').to.equal(false);
    handler = (_r, _b, res) => res.writeHead(409).end('{}');
    expect(await authed.postFailsafe(base, body, 1000)).to.equal(false);
    authed.close();
  });

  it('credentials given as a function are asked per request: a reload that changes them applies at once', async () => {
    let creds: { username: string; password: string } | undefined = { username: 'admin', password: 'old' };
    const api2 = new HttpPeerApi({ auth: () => creds });
    const seen: (string | undefined)[] = [];
    handler = (req, _body, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200).end('{}');
    };
    const body = { name: 'a', members: {} };
    await api2.postFailsafe(base, body, 1000);
    creds = { username: 'admin', password: 'new' };
    await api2.postFailsafe(base, body, 1000);
    creds = undefined;
    await api2.postFailsafe(base, body, 1000);
    expect(seen).to.deep.equal([`Basic ${Buffer.from('admin:old').toString('base64')}`, `Basic ${Buffer.from('admin:new').toString('base64')}`, undefined]);
    api2.close();
  });

  it('fetchEvents reads a peer\'s events, [] when it does not answer or refuses', async () => {
    handler = (req, _body, res) => {
      expect(req.url).to.equal('/events?format=json');
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([{ id: '1', type: 'paused' }]));
    };
    expect(await api.fetchEvents(base, 1000)).to.deep.equal([{ id: '1', type: 'paused' }]);
    handler = (_req, _body, res) => res.writeHead(401).end('{}');
    expect(await api.fetchEvents(base, 1000)).to.deep.equal([]);
    handler = (_req, _body, res) => res.writeHead(200).end('not json');
    expect(await api.fetchEvents(base, 1000)).to.deep.equal([]);
  });

  it('reuses connections (keep-alive)', async () => {
    const ports = new Set<number>();
    handler = (req, _b, res) => {
      ports.add(req.socket.remotePort!);
      res.writeHead(200).end(JSON.stringify(STATUS));
    };
    for (let i = 0; i < 5; i++) await api.fetchStatus(base, 1000);
    expect(ports.size).to.equal(1);
  });

  describe('over TLS', () => {
    let dir: string;
    let tlsServer: https.Server;
    let tlsBase: string;
    let cert: Buffer;

    before(async function () {
      dir = mkdtempSync(join(tmpdir(), 'warden-tls-'));
      try {
        execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
          '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
      } catch {
        this.skip();
      }
      cert = readFileSync(join(dir, 'cert.pem'));
      tlsServer = https.createServer({ key: readFileSync(join(dir, 'key.pem')), cert }, collect((_r, _b, res) => res.writeHead(200).end(JSON.stringify(STATUS))));
      tlsBase = `https://127.0.0.1:${await listen(tlsServer)}`;
    });
    after(() => {
      tlsServer?.closeAllConnections();
      tlsServer?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('rejects an unknown self-signed certificate by default', async () => {
      const strict = new HttpPeerApi();
      expect(await strict.fetchStatus(tlsBase, 2000)).to.equal(null);
      strict.close();
    });

    it('accepts it with the CA given, or with rejectUnauthorized false', async () => {
      const withCa = new HttpPeerApi({ tls: { ca: cert } });
      expect(await withCa.fetchStatus(tlsBase, 2000)).to.deep.equal(STATUS);
      withCa.close();
      const lax = new HttpPeerApi({ tls: { rejectUnauthorized: false } });
      expect(await lax.fetchStatus(tlsBase, 2000)).to.deep.equal(STATUS);
      lax.close();
    });

    it('TLS settings given as a function: a new object (files read again on a reload) serves the next request', async () => {
      let tls: { ca?: Buffer; rejectUnauthorized?: boolean } = { ca: Buffer.from('') };
      const api = new HttpPeerApi({ tls: () => tls });
      expect(await api.fetchStatus(tlsBase, 2000), 'a CA that is not the peer\'s').to.equal(null);
      tls = { ca: cert };
      expect(await api.fetchStatus(tlsBase, 2000)).to.deep.equal(STATUS);
      api.close();
    });
  });
});
