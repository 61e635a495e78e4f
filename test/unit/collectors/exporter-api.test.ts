import { connect } from 'node:net';
import { expect } from 'chai';
import { get as httpGet } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { BcryptBasicAuth } from '../../../src/adapters/http/basic-auth.js';
import { createExporterHandler, listenExporter, type ExporterHttpServer } from '../../../src/adapters/http/exporter-api.js';
import type { ServerStatus } from '../../../src/domain/collectors/server-state.js';
import { MemoryLogger } from './fakes.js';
import { FakeApi } from './fake-exporter-api.js';

describe('exporter HTTP API', () => {
  let api: FakeApi;
  let http: ExporterHttpServer;
  let base: string;
  before(async () => {
    api = new FakeApi();
    http = await listenExporter(createExporterHandler(api, { telemetryPath: '/metrics' }, new MemoryLogger()), '127.0.0.1', 0);
    base = `http://127.0.0.1:${http.address.port}`;
  });
  after(() => http.close());
  beforeEach(() => {
    api.status = 'primary';
    api.ready = true;
  });

  const get = async (path: string, init?: RequestInit) => {
    const r = await fetch(base + path, init);
    return { status: r.status, type: r.headers.get('content-type'), allow: r.headers.get('allow'), body: await r.text() };
  };

  it('GET /metrics: Prometheus text with the exposition content type', async () => {
    const r = await get('/metrics');
    expect(r.status).to.equal(200);
    expect(r.type).to.equal('text/plain; version=0.0.4; charset=utf-8');
    expect(r.body).to.contain('db_up 1\n');
  });

  const table: [ServerStatus, Record<string, number>][] = [
    ['primary', { '/up': 200, '/health': 200, '/read': 200, '/primary': 200, '/leader': 200, '/master': 200, '/read-write': 200, '/rw': 200, '/replica': 404, '/standby': 404, '/slave': 404, '/read-only': 404, '/ro': 404 }],
    ['replica', { '/up': 200, '/health': 200, '/read': 200, '/primary': 404, '/leader': 404, '/master': 404, '/read-write': 404, '/rw': 404, '/replica': 200, '/standby': 200, '/slave': 200, '/read-only': 200, '/ro': 200 }],
    ['down', { '/up': 503, '/health': 503, '/read': 503, '/primary': 503, '/leader': 503, '/master': 503, '/read-write': 503, '/rw': 503, '/replica': 503, '/standby': 503, '/slave': 503, '/read-only': 503, '/ro': 503 }],
    ['starting', { '/up': 503, '/primary': 503, '/replica': 503 }],
  ];
  for (const [status, codes] of table) {
    it(`role checks on a ${status} server: ${Object.entries(codes).map(([p, c]) => `${p} ${c}`).join(', ')}`, async () => {
      api.status = status;
      for (const [path, code] of Object.entries(codes)) {
        const r = await get(path);
        expect(r.status, path).to.equal(code);
        expect(r.type).to.equal('text/plain; charset=utf-8');
        expect(r.body).to.equal(`${status}\n`);
      }
    });
  }

  it("answers OPTIONS on the role checks, /liveness and /readiness like GET, without a body (HAProxy's default httpchk)", async () => {
    const options = async (path: string) => {
      const r = await fetch(base + path, { method: 'OPTIONS' });
      return { status: r.status, type: r.headers.get('content-type'), length: r.headers.get('content-length'), body: await r.text() };
    };
    const expected: [ServerStatus, boolean, Record<string, number>][] = [
      ['primary', true, { '/primary': 200, '/rw': 200, '/replica': 404, '/ro': 404, '/up': 200, '/health': 200, '/liveness': 200, '/readiness': 200 }],
      ['replica', true, { '/primary': 404, '/master': 404, '/replica': 200, '/standby': 200, '/read': 200, '/readiness': 200 }],
      ['down', false, { '/primary': 503, '/replica': 503, '/up': 503, '/liveness': 200, '/readiness': 503 }],
    ];
    for (const [status, ready, codes] of expected) {
      api.status = status;
      api.ready = ready;
      for (const [path, code] of Object.entries(codes)) {
        const r = await options(path);
        expect(r, `OPTIONS ${path} on a ${status} server`).to.deep.equal({ status: code, type: null, length: '0', body: '' });
        expect((await get(path)).status, `GET ${path} answers the same`).to.equal(code);
      }
    }
    expect((await options('/primary/')).status, 'with a trailing slash too').to.equal(503);
    const bad = await options('/primary?lag=1');
    expect(bad).to.include({ status: 400, body: '' });
    // Only the checks: the other endpoints keep refusing it.
    for (const path of ['/metrics', '/explain', '/stat', '/probe?target=db2']) expect((await options(path)).status, path).to.equal(405);
    expect((await options('/reload')).status).to.equal(405);
  });

  it('/liveness is 200 even with the database down; /readiness follows readiness', async () => {
    api.status = 'down';
    api.ready = false;
    expect((await get('/liveness')).status).to.equal(200);
    expect(await get('/readiness')).to.include({ status: 503, body: 'down\n' });
    api.status = 'primary';
    expect(await get('/readiness')).to.include({ status: 503, body: 'starting\n' });
    api.ready = true;
    expect(await get('/readiness')).to.include({ status: 200, body: 'primary\n' });
  });

  it('/reload answers JSON on POST and GET, 200 or 500; other methods 405 with Allow: GET, POST', async () => {
    const ok = await get('/reload', { method: 'POST' });
    expect(ok.status).to.equal(200);
    expect(ok.type).to.match(/^application\/json/);
    expect(JSON.parse(ok.body)).to.deep.equal(api.reloadResult);
    expect((await get('/reload')).status).to.equal(200);
    api.reloadResult = { status: 'error', message: 'bad', timestamp: '2024-01-01T00:00:00.000Z' };
    const bad = await get('/reload', { method: 'POST' });
    expect(bad.status).to.equal(500);
    expect(JSON.parse(bad.body)).to.include({ status: 'error', message: 'bad' });
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const r = await get('/reload', { method });
      expect(r.status, method).to.equal(405);
      expect(r.allow).to.equal('GET, POST');
    }
    expect(api.reloads).to.equal(3);
  });

  it('/explain is plain text; /stat is a table or JSON', async () => {
    expect(await get('/explain')).to.include({ status: 200, body: 'Collector: db_a\n', type: 'text/plain; charset=utf-8' });
    const table = await get('/stat');
    expect(table.status).to.equal(200);
    expect(table.body).to.match(/^COLLECTOR\s+RUNS/);
    const json = await get('/stat?format=json');
    expect(JSON.parse(json.body)).to.deep.equal({ collectors: api.stats() });
    expect((await get('/stat?format=xml')).status).to.equal(400);
    // A parameter given twice, or one an endpoint does not take, is a 400 too (never silently ignored).
    const twice = await get('/stat?format=json&format=text');
    expect(twice.status).to.equal(400);
    expect(JSON.parse(twice.body)).to.deep.equal({ code: 'invalid_query', error: 'give format once' });
    const unknown = await get('/primary?lag=abc');
    expect(unknown.status).to.equal(400);
    expect(JSON.parse(unknown.body)).to.deep.equal({ code: 'invalid_query', error: 'unknown query parameter "lag" (this endpoint takes none)' });
  });

  it('unknown paths 404; POST on a GET endpoint 405 with Allow', async () => {
    expect((await get('/nope')).status).to.equal(404);
    expect((await get('/metrics/x')).status).to.equal(404);
    expect(await get('/primary', { method: 'POST' })).to.include({ status: 405, allow: 'GET, OPTIONS' });
    expect(await get('/metrics', { method: 'POST' })).to.include({ status: 405, allow: 'GET' });
    expect((await get('/metrics', { method: 'HEAD' })).status).to.equal(200);
  });

  it('refusals are JSON {code, error} like the query refusals (they were plain text); a role check answering 404 stays its text status', async () => {
    const json = async (path: string, init?: RequestInit) => {
      const r = await get(path, init);
      expect(r.type, `${init?.method ?? 'GET'} ${path}`).to.equal('application/json; charset=utf-8');
      return { status: r.status, allow: r.allow, body: JSON.parse(r.body) as unknown };
    };
    expect(await json('/nope')).to.deep.equal({ status: 404, allow: null, body: { code: 'not_found', error: 'no such endpoint: /nope' } });
    expect(await json('/explain', { method: 'DELETE' })).to.deep.equal({ status: 405, allow: 'GET', body: { code: 'method_not_allowed', error: 'DELETE is not allowed on /explain; allowed: GET' } });
    expect(await json('/primary', { method: 'POST' })).to.deep.include({ status: 405, allow: 'GET, OPTIONS' });
    api.status = 'replica';
    expect(await get('/primary')).to.include({ status: 404, type: 'text/plain; charset=utf-8', body: 'replica\n' });
    // HEAD and OPTIONS answers carry no body, refusals included.
    expect(await get('/nope', { method: 'HEAD' })).to.include({ status: 404, body: '' });
  });

  it('a malformed absolute-form request target is answered as its path, and the exporter goes on (it crashed the process)', async () => {
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(http.address.port, '127.0.0.1', () => socket.end(request));
        let data = '';
        socket.on('data', (d) => (data += d.toString()));
        socket.on('end', () => resolve(data));
        socket.on('error', reject);
      });
    for (const target of ['http://[::1/metrics', 'http://xn--/metrics']) expect((await raw(`GET ${target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)).split('\r\n')[0], target).to.equal('HTTP/1.1 200 OK');
    const noHost = await raw('GET /metrics HTTP/1.1\r\n\r\n');
    expect(noHost.split('\r\n')[0]).to.equal('HTTP/1.1 400 Bad Request');
    expect(JSON.parse(noHost.slice(noHost.indexOf('\r\n\r\n') + 4))).to.deep.equal({ code: 'invalid_request', error: 'malformed HTTP request (an HTTP/1.1 request needs a Host header)' });
    expect((await get('/metrics')).status).to.equal(200);
  });

  it('a trailing slash is the same path; an absolute-form request target is its path', async () => {
    expect((await get('/metrics/')).status).to.equal(200);
    api.status = 'replica';
    expect((await get('/replica/')).status).to.equal(200);
    const primary = await get('/primary/');
    expect(primary, 'the check answered, not an unknown path').to.include({ status: 404, body: 'replica\n' });
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(http.address.port, '127.0.0.1', () => socket.end(`GET ${base}/replica HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
      let data = '';
      socket.on('data', (d) => (data += d.toString()));
      socket.on('end', () => resolve(data));
      socket.on('error', reject);
    });
    expect(raw.split('\r\n')[0]).to.equal('HTTP/1.1 200 OK');
  });

  it('serves the telemetry path given by --web.telemetry-path', async () => {
    const other = await listenExporter(createExporterHandler(api, { telemetryPath: '/prom' }, new MemoryLogger()), '127.0.0.1', 0);
    try {
      expect((await fetch(`http://127.0.0.1:${other.address.port}/prom`)).status).to.equal(200);
      expect((await fetch(`http://127.0.0.1:${other.address.port}/metrics`)).status).to.equal(404);
    } finally {
      await other.close();
    }
  });
});

describe('exporter HTTP API: formats, compression, probe, basic auth', () => {
  let api: FakeApi;
  let http: ExporterHttpServer;
  let base: string;
  // bcrypt of "s3cret" (cost 4: fast enough for a test)
  const HASH = '$2b$04$YCOWfsikja5zqy.uVmVv2eWtMPm6Ffxqlv693AXY1VQPso/KO7DsO';
  const auth = new BcryptBasicAuth({ alice: HASH });
  before(async () => {
    api = new FakeApi();
    http = await listenExporter(createExporterHandler(api, { telemetryPath: '/metrics', auth, openHealthChecks: true, headers: { 'X-Frame-Options': 'deny' } }, new MemoryLogger()), '127.0.0.1', 0);
    base = `http://127.0.0.1:${http.address.port}`;
  });
  after(() => http.close());
  const basic = (user: string, password: string) => ({ Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` });

  it('headers Node would refuse in every answer are refused when the handler is made, all listed', () => {
    const make = (headers: Record<string, string>) => () => createExporterHandler(api, { telemetryPath: '/metrics', headers }, new MemoryLogger());
    expect(make({ 'X-Ok': 'yes' })).to.not.throw();
    expect(make({ 'Bad Name': 'x', 'X-Value': 'a\nb' })).to.throw(/headers\.Bad Name: .*\n?.*headers\.X-Value: /s);
  });

  it('basic auth: 401 with a challenge without or with wrong credentials, 200 with the right ones; health checks left open', async () => {
    const none = await fetch(`${base}/metrics`);
    expect(none.status).to.equal(401);
    expect(none.headers.get('www-authenticate')).to.match(/^Basic realm=/);
    expect(await none.json()).to.deep.equal({ code: 'unauthorized', error: 'authentication required' });
    expect(await (await fetch(`${base}/metrics`, { headers: basic('alice', 'wrong') })).json()).to.deep.equal({ code: 'unauthorized', error: 'invalid credentials' });
    expect((await fetch(`${base}/metrics`, { headers: basic('alice', 'wrong') })).status).to.equal(401);
    expect((await fetch(`${base}/metrics`, { headers: basic('bob', 's3cret') })).status).to.equal(401);
    const ok = await fetch(`${base}/metrics`, { headers: basic('alice', 's3cret') });
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('x-frame-options')).to.equal('deny');
    for (const p of ['/primary', '/up', '/liveness', '/readiness']) expect((await fetch(base + p)).status, p).to.equal(200);
    for (const p of ['/primary', '/up', '/liveness', '/readiness']) expect((await fetch(base + p, { method: 'OPTIONS' })).status, `OPTIONS ${p}`).to.equal(200);
    for (const p of ['/stat', '/explain', '/reload', '/probe?target=db2']) expect((await fetch(base + p)).status, p).to.equal(401);
  });

  it('OpenMetrics when negotiated, text otherwise; gzip when accepted (Content-Encoding, Vary)', async () => {
    const h = basic('alice', 's3cret');
    const om = await fetch(`${base}/metrics`, { headers: { ...h, Accept: 'application/openmetrics-text;version=1.0.0,text/plain;q=0.5' } });
    expect(om.headers.get('content-type')).to.equal('application/openmetrics-text; version=1.0.0; charset=utf-8');
    expect(await om.text()).to.match(/# EOF\n$/);
    const gz = await new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
      httpGet(`${base}/metrics`, { headers: { ...h, 'Accept-Encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
    expect(gz.encoding).to.equal('gzip');
    expect(gunzipSync(gz.body).toString()).to.contain('db_up 1\n');
    const plain = await fetch(`${base}/metrics`, { headers: { ...h, 'Accept-Encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).to.equal(null);
    expect(plain.headers.get('content-type')).to.equal('text/plain; version=0.0.4; charset=utf-8');
  });

  it('/probe: the named target, 400 JSON without target, 404 JSON for an unknown one', async () => {
    const h = basic('alice', 's3cret');
    const ok = await fetch(`${base}/probe?target=db2`, { headers: h });
    expect(ok.status).to.equal(200);
    expect(await ok.text()).to.contain('db_up{target="db2"} 1');
    const missing = await fetch(`${base}/probe`, { headers: h });
    expect(missing.status).to.equal(400);
    expect(await missing.json()).to.include({ code: 'invalid_query' });
    const two = await fetch(`${base}/probe?target=a&target=b`, { headers: h });
    expect(two.status).to.equal(400);
    const unknown = await fetch(`${base}/probe?target=nope`, { headers: h });
    expect(unknown.status).to.equal(404);
    expect(await unknown.json()).to.include({ code: 'unknown_target' });
  });
});
