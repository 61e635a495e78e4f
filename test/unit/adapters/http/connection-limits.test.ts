import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest } from 'node:https';
import { connect, type AddressInfo } from 'node:net';
import { limitConnections } from '../../../../src/adapters/http/connection-limits.js';
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
