import { expect } from 'chai';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { MAX_CONNECTIONS } from '../../../../src/adapters/http/connection-limits.js';
import { MAX_BODY_BYTES } from '../../../../src/adapters/http/body.js';
import { ClusterKey } from '../../../../src/adapters/cluster-store/keys.js';
import { primaryFacts, snapshot, startApi, type ApiHarness } from './support.js';
import { makeTlsFiles, type TlsFiles } from './tls-fixtures.js';

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const AUTH = { authentication: { username: 'admin', password: 's3cret' } };

describe('REST API: access control, bodies, headers', function () {
  let api: ApiHarness;
  afterEach(() => api?.close());

  describe('Basic auth', () => {
    beforeEach(async () => {
      api = await startApi({ access: AUTH });
    });

    it('every unsafe method without credentials: 401 with WWW-Authenticate, nothing done', async () => {
      for (const [method, path] of [['POST', '/restart'], ['DELETE', '/restart'], ['PATCH', '/config'], ['PUT', '/config'], ['POST', '/switchover'], ['DELETE', '/switchover'], ['POST', '/reload'], ['POST', '/failsafe']]) {
        const res = await api.request(method!, path!, { body: {} });
        expect(res.status, `${method} ${path}`).to.equal(401);
        expect(res.headers.get('www-authenticate')).to.equal('Basic realm="svc"');
        expect(res.json.error).to.equal('unauthorized');
      }
      expect(api.control.restarts).to.deep.equal([]);
      expect(api.control.reloads).to.equal(0);
    });

    it('wrong user, wrong password, malformed header: 401', async () => {
      for (const authorization of [basic('admin', 'wrong'), basic('root', 's3cret'), basic('admin', 's3cret1'), 'Basic !!!', 'Bearer abc', basic('admin', '')]) {
        const res = await api.request('POST', '/reload', { headers: { authorization } });
        expect(res.status, authorization).to.equal(401);
      }
    });

    it('right credentials: the action runs', async () => {
      const res = await api.request('POST', '/reload', { headers: { authorization: basic('admin', 's3cret') } });
      expect(res.status).to.equal(202);
    });

    it('safe methods stay open', async () => {
      api.control.snap = snapshot({ facts: primaryFacts(), leader: true });
      expect((await api.request('GET', '/primary')).status).to.equal(200);
      expect((await api.request('GET', '/node')).status).to.equal(200);
      expect((await api.request('GET', '/metrics')).status).to.equal(200);
      expect((await api.request('GET', '/config')).status).to.equal(200);
    });

    it('credentials are checked before the body is read (no 400/413 leaks without them)', async () => {
      const res = await api.request('PATCH', '/config', { raw: '{not json' });
      expect(res.status).to.equal(401);
    });
  });

  describe('allowlist', () => {
    it('a client outside the allowlist: 403, before Basic auth', async () => {
      api = await startApi({ access: { ...AUTH, allowlist: ['10.0.0.0/8', '192.168.1.7'] } });
      const res = await api.request('POST', '/reload');
      expect(res.status).to.equal(403);
      expect(res.json.error).to.equal('forbidden');
      expect((await api.request('POST', '/reload', { headers: { authorization: basic('admin', 's3cret') } })).status).to.equal(403);
      expect((await api.request('GET', '/health')).status).to.be.oneOf([200, 503]);
    });

    it('a host name allows the addresses it resolved to; one not (yet) resolved allows nothing', async () => {
      const resolved = new Map<string, readonly string[]>([['lb.example.org', ['10.1.1.1', '127.0.0.1']]]);
      api = await startApi({ access: { ...AUTH, allowlist: ['lb.example.org'], addressesOf: (n) => resolved.get(n) ?? [] } });
      expect((await api.request('POST', '/reload', { headers: { authorization: basic('admin', 's3cret') } })).status).to.equal(202);
      await api.close();
      api = await startApi({ access: { ...AUTH, allowlist: ['unknown.example.org'], addressesOf: (n) => resolved.get(n) ?? [] } });
      expect((await api.request('POST', '/reload', { headers: { authorization: basic('admin', 's3cret') } })).status).to.equal(403);
    });

    it('an allowlist required while empty (filled from the members, none known yet) lets nobody in', async () => {
      api = await startApi({ access: { ...AUTH, allowlist: [], allowlistRequired: true } });
      expect((await api.request('POST', '/reload', { headers: { authorization: basic('admin', 's3cret') } })).status).to.equal(403);
      await api.close();
      api = await startApi({ access: { ...AUTH, allowlist: ['127.0.0.1'], allowlistRequired: true } });
      expect((await api.request('POST', '/reload', { headers: { authorization: basic('admin', 's3cret') } })).status).to.equal(202);
    });

    it('a client inside the allowlist goes on to Basic auth', async () => {
      api = await startApi({ access: { ...AUTH, allowlist: ['127.0.0.0/8'] } });
      expect((await api.request('POST', '/reload')).status).to.equal(401);
      expect((await api.request('POST', '/reload', { headers: { authorization: basic('admin', 's3cret') } })).status).to.equal(202);
    });
  });

  describe('HTTPS and client certificates', function () {
    let tls: TlsFiles;
    before(function () {
      this.timeout(20_000);
      tls = makeTlsFiles();
    });
    after(() => tls.remove());

    function call(method: string, path: string, opts: { cert?: boolean; authorization?: string } = {}): Promise<{ status: number; body: string }> {
      return new Promise((resolve, reject) => {
        const req = httpsRequest(
          `${api.url}${path}`,
          {
            method,
            ca: tls.read(tls.caCert),
            ...(opts.cert ? { cert: tls.read(tls.clientCert), key: tls.read(tls.clientKey) } : {}),
            headers: opts.authorization ? { authorization: opts.authorization } : {},
            agent: false,
          },
          (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode!, body }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    }

    it('serves HTTPS with certfile/keyfile', async () => {
      api = await startApi({ tls: { certfile: tls.serverCert, keyfile: tls.serverKey } });
      expect(api.url).to.match(/^https:/);
      expect((await call('GET', '/node')).status).to.equal(200);
    });

    it('verify_client optional: unsafe endpoints need a valid client certificate (403), then Basic auth (401)', async () => {
      api = await startApi({
        tls: { certfile: tls.serverCert, keyfile: tls.serverKey, cafile: tls.caCert, verifyClient: 'optional' },
        access: { ...AUTH, verifyClient: 'optional' },
      });
      expect((await call('GET', '/node')).status).to.equal(200);
      const noCert = await call('POST', '/reload', { authorization: basic('admin', 's3cret') });
      expect(noCert.status).to.equal(403);
      expect(JSON.parse(noCert.body).error).to.equal('client_certificate_required');
      expect((await call('POST', '/reload', { cert: true })).status).to.equal(401);
      expect((await call('POST', '/reload', { cert: true, authorization: basic('admin', 's3cret') })).status).to.equal(202);
    });

    it('verify_client required: no TLS session without a client certificate', async () => {
      api = await startApi({
        tls: { certfile: tls.serverCert, keyfile: tls.serverKey, cafile: tls.caCert, verifyClient: 'required' },
        access: { verifyClient: 'required' },
      });
      let failed = false;
      try {
        await call('GET', '/node');
      } catch {
        failed = true;
      }
      expect(failed).to.equal(true);
      expect((await call('GET', '/node', { cert: true })).status).to.equal(200);
      expect((await call('POST', '/reload', { cert: true })).status).to.equal(202);
    });
  });

  describe('request bodies', () => {
    beforeEach(async () => {
      api = await startApi();
    });

    it('a body above 64 KiB: 413 (declared length or not)', async () => {
      const big = JSON.stringify({ leader: 'x'.repeat(MAX_BODY_BYTES) });
      const res = await api.request('POST', '/switchover', { raw: big });
      expect(res.status).to.equal(413);
      expect(res.json.error).to.equal('body_too_large');
      // Streamed without Content-Length: counted while reading.
      const stream = new ReadableStream({
        start(c) {
          for (let i = 0; i < 70; i++) c.enqueue(new TextEncoder().encode(' '.repeat(1024)));
          c.close();
        },
      });
      const chunked = await fetch(api.url + '/restart', { method: 'POST', body: stream, duplex: 'half' } as RequestInit);
      expect(chunked.status).to.equal(413);
    });

    it('exactly 64 KiB is accepted', async () => {
      const body = '{' + ' '.repeat(MAX_BODY_BYTES - 2) + '}';
      expect((await api.request('POST', '/restart', { raw: body })).status).to.equal(200);
    });

    it('malformed JSON, a non-object, or __proto__: 400 JSON, never 500', async () => {
      for (const raw of ['{"leader": ', 'leader=node0', '[]', '"x"', 'true', '{"__proto__": {"polluted": 1}}', '\u0000\u0001']) {
        const res = await api.request('POST', '/switchover', { raw });
        expect(res.status, JSON.stringify(raw)).to.equal(400);
        expect(res.json.error).to.be.oneOf(['invalid_json', 'invalid_body']);
      }
      expect(({} as Record<string, unknown>)['polluted']).to.equal(undefined);
    });

    it('bytes that are not UTF-8, or nesting too deep: 400 with a reason', async () => {
      const bytes = await fetch(api.url + '/switchover', { method: 'POST', body: Buffer.from([0x7b, 0x22, 0x6c, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) });
      expect(bytes.status).to.equal(400);
      expect(await bytes.json()).to.deep.include({ error: 'invalid_body', message: 'request body is not valid UTF-8' });
      const deep = await api.request('POST', '/restart', { raw: '{"a":' + '['.repeat(20_000) + ']'.repeat(20_000) + '}' });
      expect(deep.status).to.be.oneOf([400, 413]);
      expect(deep.json.error).to.be.oneOf(['invalid_json', 'invalid_body', 'body_too_large']);
    });

    it('/reload and the DELETEs take no fields: anything but an empty body or {} is a 400', async () => {
      for (const [method, path] of [['POST', '/reload'], ['DELETE', '/switchover'], ['DELETE', '/restart']] as const) {
        for (const raw of ['{', '[]', '{"zzz":1}']) {
          const res = await api.request(method, path, { raw });
          expect(res.status, `${method} ${path} ${raw}`).to.equal(400);
          expect(res.json.error).to.be.oneOf(['invalid_json', 'invalid_body']);
        }
        // Accepted: 2xx, or 404 for a DELETE with nothing scheduled.
        expect((await api.request(method, path, { raw: '{}' })).status, `${method} ${path} {}`).to.be.oneOf([200, 202, 404]);
        expect((await api.request(method, path)).status, `${method} ${path}`).to.be.oneOf([200, 202, 404]);
      }
    });

    it('HTTP that Node cannot parse gets a JSON error too (bad Content-Length, headers over 16 KiB), and the connection limits are set', async () => {
      const raw = (text: string) =>
        new Promise<string>((resolve, reject) => {
          const { port } = new URL(api.url);
          const socket = connect(Number(port), '127.0.0.1', () => socket.end(text));
          let got = '';
          socket.on('data', (d) => (got += d.toString()));
          socket.on('close', () => resolve(got));
          socket.on('error', reject);
        });
      const badLength = await raw('POST /switchover HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n{}');
      expect(badLength).to.match(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(JSON.parse(badLength.split('\r\n\r\n')[1]!)).to.deep.include({ error: 'invalid_request' });
      const bigHeaders = await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
      expect(bigHeaders).to.match(/^HTTP\/1\.1 431 /);
      expect(api.server.server.maxConnections).to.equal(MAX_CONNECTIONS);
      expect(api.server.server.requestTimeout).to.be.at.most(120_000);
    });

    it('a random-bytes body on every unsafe endpoint never gives a 500', async () => {
      // A stored configuration, so that PATCH gets as far as merging and validating the body.
      await api.dcs.put(ClusterKey.config, JSON.stringify({ ttl: 30 }));
      const bodies = ['{', '}', '{"a":1}', '{"force": null}', '{"timeout": -1}', '{"schedule": 5}', '{"members": []}', '\xff\xfe', '{"ttl": 1e400}'];
      for (const [method, path] of [['POST', '/switchover'], ['POST', '/failover'], ['POST', '/restart'], ['POST', '/reinitialize'], ['PATCH', '/config'], ['PUT', '/config'], ['POST', '/failsafe']]) {
        for (const raw of bodies) {
          const res = await api.request(method!, path!, { raw });
          expect(res.status, `${method} ${path} ${raw}`).to.be.below(500);
          expect(res.json, `${method} ${path} ${raw}`).to.be.an('object');
        }
      }
      expect(api.logger.lines.filter((l) => l.level === 'error')).to.deep.equal([]);
    });
  });

  describe('http_extra_headers', () => {
    it('appear on every response: health, errors, actions', async () => {
      api = await startApi({ extraHeaders: { 'X-Frame-Options': 'DENY', 'X-Cluster': 'demo' }, access: AUTH });
      for (const [method, path] of [['GET', '/primary'], ['HEAD', '/replica'], ['OPTIONS', '/health'], ['GET', '/nope'], ['POST', '/reload'], ['GET', '/metrics'], ['GET', '/replica?lag=abc']]) {
        const res = await api.request(method!, path!);
        expect(res.headers.get('x-frame-options'), `${method} ${path}`).to.equal('DENY');
        expect(res.headers.get('x-cluster')).to.equal('demo');
      }
    });
  });
});
