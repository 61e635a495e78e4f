import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Ports for test servers come from below the kernel's ephemeral range: a port the OS hands
 * out for `listen(0)` is released before PostgreSQL, etcd or an agent binds it, and in that
 * gap any outgoing connection on the machine may take it as its local port (an agent then
 * failed to start with EADDRINUSE). Mocha workers run in parallel, so each port is also
 * reserved by a lock file that other test processes respect.
 */
const LOWEST = 20_000;
const RESERVATIONS = join(tmpdir(), 'warden-test-ports');
/** A reservation older than this is left over from a test process that died. */
const STALE_MS = 30 * 60_000;
const mine = new Set<string>();

function ephemeralStart(): number {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    return low !== undefined && Number.isInteger(low) && low > LOWEST + 1000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

function reserve(port: number): boolean {
  const file = join(RESERVATIONS, String(port));
  try {
    writeFileSync(file, String(process.pid), { flag: 'wx' });
  } catch {
    try {
      if (Date.now() - statSync(file).mtimeMs < STALE_MS) return false;
      writeFileSync(file, String(process.pid));
    } catch {
      return false;
    }
  }
  mine.add(file);
  return true;
}

process.once('exit', () => {
  for (const f of mine) rmSync(f, { force: true });
});

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** A loopback TCP port nobody listens on, outside the ephemeral range and reserved for this test process. */
export async function freePort(): Promise<number> {
  mkdirSync(RESERVATIONS, { recursive: true, mode: 0o1777 });
  const high = ephemeralStart();
  for (let attempt = 0; attempt < 1000; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (high - LOWEST));
    if (port === 5432 || !reserve(port)) continue;
    if (await bindable(port)) return port;
  }
  throw new Error(`no free loopback port between ${LOWEST} and ${high}`);
}

/** `n` distinct free loopback ports. */
export async function freePorts(n: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < n) ports.add(await freePort());
  return [...ports];
}
