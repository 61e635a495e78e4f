import { spawn } from 'node:child_process';
import { waitFor, stopPid } from '../../scripts/lib/processes.js';
import { freePort } from '../../test/support/free-port.js';
import { onCleanup } from './cleanup.js';

/** A plain node:http server in its own process: the ceiling any Node HTTP API reaches on this machine right now. */
export interface BaselineServer {
  readonly url: string;
  readonly pid: number;
  stop(): Promise<void>;
}

const SERVER = `
const http = require('node:http');
const body = Buffer.alloc(Number(process.env.BODY_BYTES), 'x');
const s = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
  res.end(body);
});
s.keepAliveTimeout = 65000;
s.listen(Number(process.env.PORT), '127.0.0.1');
`;

/** Starts a server answering every request 200 with `bodyBytes` bytes, on a free loopback port, node run with `nodeArgs`. */
export async function startBaselineServer(bodyBytes: number, nodeArgs: readonly string[] = []): Promise<BaselineServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, '-e', SERVER], { stdio: 'ignore', env: { ...process.env, PORT: String(port), BODY_BYTES: String(bodyBytes) } });
  const pid = child.pid;
  if (pid === undefined) throw new Error('could not start the baseline server');
  const stop = () => stopPid(pid, 5000);
  onCleanup(stop);
  const url = `http://127.0.0.1:${port}/`;
  await waitFor('the baseline server', 10_000, async () => ((await fetch(url)).ok ? true : undefined), 100);
  return { url, pid, stop };
}
