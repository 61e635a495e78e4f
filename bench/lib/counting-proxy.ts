import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP relay on a loopback port in front of etcd that counts the bytes crossing it: what
 * one cluster's clients really send and receive on the wire (HTTP and JSON for the gateway,
 * HTTP/2 frames for gRPC), which etcd's own byte counter does not show for gateway clients.
 */
export class CountingProxy {
  /** Bytes etcd sent to the clients behind this relay. */
  fromEtcd = 0;
  /** Bytes the clients sent to etcd. */
  toEtcd = 0;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  /** Listens on a free loopback port and relays every connection to `127.0.0.1:etcdPort`. */
  static async start(etcdPort: number): Promise<CountingProxy> {
    let proxy: CountingProxy | undefined;
    const server = createServer((client) => {
      const upstream = createConnection({ host: '127.0.0.1', port: etcdPort });
      const p = proxy!;
      p.sockets.add(client).add(upstream);
      client.setNoDelay(true);
      upstream.setNoDelay(true);
      client.on('data', (b: Buffer) => {
        p.toEtcd += b.length;
        if (!upstream.write(b)) client.pause();
      });
      upstream.on('data', (b: Buffer) => {
        p.fromEtcd += b.length;
        if (!client.write(b)) upstream.pause();
      });
      client.on('drain', () => upstream.resume());
      upstream.on('drain', () => client.resume());
      const close = () => {
        client.destroy();
        upstream.destroy();
        p.sockets.delete(client);
        p.sockets.delete(upstream);
      };
      for (const s of [client, upstream]) {
        s.on('error', close);
        s.on('close', close);
        s.on('end', () => (s === client ? upstream.end() : client.end()));
      }
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const addr = server.address();
    proxy = new CountingProxy(server, typeof addr === 'object' && addr ? addr.port : 0);
    return proxy;
  }

  /** Stops listening and drops every relayed connection. */
  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
