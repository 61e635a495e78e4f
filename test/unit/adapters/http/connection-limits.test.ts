import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import { connect, type AddressInfo } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { limitConnections } from '../../../../src/adapters/http/connection-limits.js';
import { describeResponse, isResponse, RawConnection, type RawResponse } from './fuzz-kit.js';
import { makeTlsFiles } from './tls-fixtures.js';

const SLOW_MS = 600;
const FIRST_MS = 300;

/** Resolves with the ms until the server closed a connection that sent nothing. */
function silentFor(port: number): Promise<number> {
  return new Promise((resolve) => {
    const started = Date.now();
    const s = connect(port, '127.0.0.1');
    s.on('close', () => resolve(Date.now() - started));
    s.on('error', () => undefined);
  });
}

async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('API listeners: a connection that stays silent is closed; a request that takes long is not', function () {
  this.timeout(10_000);
  const slowHandler = (_req: unknown, res: { end(s: string): void }) => setTimeout(() => res.end('done'), SLOW_MS);

  it('plain HTTP', async () => {
    const server = createServer(slowHandler as never);
    limitConnections(server, 5000, FIRST_MS);
    const port = await listening(server);
    try {
      expect(await silentFor(port)).to.be.within(FIRST_MS - 50, FIRST_MS + 1000);
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'an answer after the silent limit').to.equal('done');
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('HTTPS: the handshake is bounded too, and a long request after it is not cut', async () => {
    const tls = await makeTlsFiles();
    const server = createHttpsServer({ cert: tls.read(tls.serverCert), key: tls.read(tls.serverKey), handshakeTimeout: FIRST_MS }, slowHandler as never);
    limitConnections(server, 5000, FIRST_MS);
    const port = await listening(server);
    try {
      expect(await silentFor(port)).to.be.within(FIRST_MS - 50, FIRST_MS + 1000);
      const body = await new Promise<string>((resolve, reject) => {
        const req = httpsRequest({ host: '127.0.0.1', port, path: '/', ca: tls.read(tls.caCert), servername: 'localhost', rejectUnauthorized: false }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve(text));
        });
        req.on('error', reject);
        req.end();
      });
      expect(body).to.equal('done');
    } finally {
      server.closeAllConnections();
      server.close();
      tls.remove();
    }
  });
});

describe('API listeners: what Node answers by itself is answered as JSON, and an upgrade is ignored', function () {
  this.timeout(10_000);
  let server: Server;
  let port: number;
  const seen: string[] = [];
  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} ${Buffer.concat(chunks).toString()}`);
        res.end(JSON.stringify({ url: req.url, body: Buffer.concat(chunks).toString(), connection: req.headers.connection ?? null, upgrade: req.headers.upgrade ?? null }));
      });
    });
    limitConnections(server);
    port = await listening(server);
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  beforeEach(() => (seen.length = 0));

  /** Writes `raw` on one connection and reads one response per method in `methods`; `closed`: the server closed it after them. */
  async function exchange(raw: string, methods: string[] = ['GET']): Promise<{ responses: RawResponse[]; closed: boolean }> {
    const conn = await RawConnection.open(port);
    try {
      await conn.write(Buffer.from(raw, 'latin1'));
      const responses: RawResponse[] = [];
      for (const m of methods) {
        const r = await conn.next(m, 2000);
        if (!isResponse(r)) throw new Error(`no answer: ${describeResponse(r)}`);
        responses.push(r);
      }
      const after = await conn.next('GET', 200);
      return { responses, closed: !isResponse(after) && after.kind === 'closed' };
    } finally {
      conn.destroy();
    }
  }
  const json = (r: RawResponse) => JSON.parse(r.body.toString()) as Record<string, unknown>;

  it('an HTTP/1.1 request without Host: 400 JSON invalid_request, the connection closed (Node sent an empty 400)', async () => {
    const { responses, closed } = await exchange('GET /x HTTP/1.1\r\n\r\n');
    expect(responses[0]!.status).to.equal(400);
    expect(responses[0]!.headers['content-type']).to.equal('application/json; charset=utf-8');
    expect(json(responses[0]!)).to.deep.equal({ error: 'invalid_request', message: 'malformed HTTP request (an HTTP/1.1 request needs a Host header)' });
    expect(closed).to.equal(true);
    expect(seen, 'the handler never ran').to.deep.equal([]);
    // HTTP/1.0 needs none.
    expect((await exchange('GET /y HTTP/1.0\r\n\r\n')).responses[0]!.status).to.equal(200);
  });

  it('an Expect other than 100-continue: 417 JSON (Node sent it empty); 100-continue goes on as before', async () => {
    const { responses } = await exchange('POST /x HTTP/1.1\r\nHost: h\r\nExpect: x-weird\r\nContent-Length: 2\r\n\r\n{}');
    expect(responses[0]!.status).to.equal(417);
    expect(json(responses[0]!)).to.deep.equal({ error: 'expectation_failed', message: 'unsupported Expect: "x-weird" (only 100-continue is)' });
    const ok = await exchange('POST /x HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}');
    expect(ok.responses[0]!.status).to.equal(200);
  });

  it('CONNECT: 400 JSON and the connection closed, whatever followed it (Node closed it without a word)', async () => {
    const { responses, closed } = await exchange(`CONNECT /x HTTP/1.1\r\nHost: h\r\nContent-Length: 70000\r\n\r\n${'x'.repeat(70_000)}`);
    expect(responses[0]!.status).to.equal(400);
    expect(json(responses[0]!)).to.deep.include({ error: 'invalid_request' });
    expect(closed).to.equal(true);
    // The server let go of it too (it stayed open until the first-request timeout).
    for (let i = 0; i < 100 && (await new Promise<number>((r) => server.getConnections((_e, n) => r(n)))) > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(await new Promise<number>((r) => server.getConnections((_e, n) => r(n)))).to.equal(0);
  });

  it('a request asking for an upgrade is served as plain HTTP/1.1: body, keep-alive, the next request on the connection answered', async () => {
    // Node answered it but took the rest of the connection for the other protocol: the next request never got an answer.
    const { responses, closed } = await exchange(
      'POST /a HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\nGET /c HTTP/1.1\r\nHost: h\r\n\r\n',
      ['POST', 'GET', 'GET'],
    );
    expect(responses.map((r) => r.status)).to.deep.equal([200, 200, 200]);
    expect(json(responses[0]!)).to.deep.equal({ url: '/a', body: '{}', connection: 'keep-alive', upgrade: null });
    expect(json(responses[1]!)).to.deep.equal({ url: '/b', body: '', connection: 'HTTP2-Settings', upgrade: null });
    expect(json(responses[2]!)).to.deep.include({ url: '/c' });
    expect(closed).to.equal(false);
  });

  it('a malformed chunk after an upgrade request: 400 JSON (the request waited for the rest of its body until its timeout)', async () => {
    const { responses } = await exchange('PUT /a HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
    expect(responses[0]!.status).to.equal(400);
    expect(json(responses[0]!)).to.deep.equal({ error: 'invalid_request', message: 'malformed HTTP request (HPE_INVALID_CHUNK_SIZE)' });
  });

  it('over HTTPS too: an upgrade request pipelined behind another is answered in order, and the next one after it', async () => {
    const tls = await makeTlsFiles();
    const secure = createHttpsServer({ cert: tls.read(tls.serverCert), key: tls.read(tls.serverKey) }, (req, res) => {
      req.resume();
      req.on('end', () => setTimeout(() => res.end(req.url), 5));
    });
    limitConnections(secure);
    const securePort = await listening(secure);
    try {
      const text = await new Promise<string>((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port: securePort, ca: tls.read(tls.caCert), servername: 'localhost', rejectUnauthorized: false }, () => {
          socket.write('GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\nGET /3 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n');
        });
        let got = '';
        socket.on('data', (d: Buffer) => (got += d.toString()));
        socket.on('end', () => resolve(got));
        socket.on('error', reject);
      });
      expect(text.match(/HTTP\/1\.1 200 /g)).to.have.length(3);
      expect([...text.matchAll(/\r\n\r\n(\/\d)/g)].map((m) => m[1])).to.deep.equal(['/1', '/2', '/3']);
    } finally {
      secure.closeAllConnections();
      secure.close();
      tls.remove();
    }
  });

  it('a listener with an error shape of its own (the exporter: {code, error}) answers in it', async () => {
    const other = createServer((_req, res) => res.end('ok'));
    limitConnections(other, undefined, undefined, (code, message) => ({ code, error: message }));
    const otherPort = await listening(other);
    try {
      const conn = await RawConnection.open(otherPort);
      await conn.write(Buffer.from('GET /x HTTP/1.1\r\n\r\n'));
      const r = await conn.next('GET', 2000);
      conn.destroy();
      expect(isResponse(r) && r.status).to.equal(400);
      expect(JSON.parse((r as RawResponse).body.toString())).to.deep.equal({ code: 'invalid_request', error: 'malformed HTTP request (an HTTP/1.1 request needs a Host header)' });
    } finally {
      other.closeAllConnections();
      other.close();
    }
  });
});
