import { connect, createServer, type Server, type Socket } from 'node:net';

/** A TCP relay on loopback to `target`: it counts connections, and may hold each chunk back. */
export interface TcpRelay {
  /** `127.0.0.1:port` to connect to instead of the target. */
  readonly host: string;
  /** Connections open through it now. */
  open(): number;
  /** Connections made through it so far. */
  opened(): number;
  close(): Promise<void>;
}

/**
 * Starts a relay to `target` (`host:port`). With `delayMs`, each chunk is handed on that long
 * after it came, in order, both ways: a slow but working link.
 */
export async function startTcpRelay(target: string, opts: { readonly delayMs?: number } = {}): Promise<TcpRelay> {
  const [targetHost, targetPort] = target.split(':') as [string, string];
  const delayMs = opts.delayMs ?? 0;
  const sockets = new Set<Socket>();
  let opened = 0;
  const relay = (from: Socket, to: Socket) => {
    if (delayMs === 0) from.pipe(to);
    else from.on('data', (chunk) => setTimeout(() => to.destroyed || to.write(chunk), delayMs));
  };
  const server: Server = createServer((client) => {
    opened++;
    const upstream = connect(Number(targetPort), targetHost);
    sockets.add(client);
    const done = () => {
      sockets.delete(client);
      client.destroy();
      upstream.destroy();
    };
    // A slow link hands on the close after the data before it, not ahead of it.
    const later = () => (delayMs === 0 ? done() : setTimeout(done, delayMs + 10));
    client.on('close', later).on('error', later);
    upstream.on('close', later).on('error', later);
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    host: `127.0.0.1:${port}`,
    open: () => sockets.size,
    opened: () => opened,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
