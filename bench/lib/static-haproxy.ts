import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnDetached, stopPid, waitFor } from '../../scripts/lib/processes.js';
import { HAPROXY_BIN } from '../../test/support/haproxy.js';
import { freePort } from '../../test/support/free-port.js';
import { onCleanup } from './cleanup.js';
import type { BaselineServer } from './baseline-server.js';

/** True when HAProxy is installed (Debian package haproxy). */
export function staticHaproxyInstalled(): boolean {
  return existsSync(HAPROXY_BIN);
}

/**
 * HAProxy answering every request itself (`http-request return`), one thread, no backend: a
 * server in C with nothing to do but answer, the floor of any HTTP server's latency on this
 * machine right now. A maximum it shows too comes from the machine (a core taken away, the
 * load generator's own wait), not from the server's work.
 */
export async function startStaticHaproxy(bodyBytes: number): Promise<BaselineServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'warden-bench-static-haproxy-'));
  const config = [
    'global',
    '  nbthread 1',
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout client 65s',
    '  timeout connect 5s',
    '  timeout server 5s',
    '  timeout http-keep-alive 65s',
    'frontend health',
    `  bind 127.0.0.1:${port}`,
    `  http-request return status 200 content-type application/json string "${'x'.repeat(bodyBytes)}"`,
    '',
  ].join('\n');
  writeFileSync(join(dir, 'haproxy.cfg'), config);
  const pid = spawnDetached(HAPROXY_BIN, ['-f', join(dir, 'haproxy.cfg'), '-db'], join(dir, 'haproxy.log'));
  const stop = async () => {
    await stopPid(pid, 5000);
    rmSync(dir, { recursive: true, force: true });
  };
  onCleanup(stop);
  const url = `http://127.0.0.1:${port}/`;
  await waitFor('the static HAProxy', 10_000, async () => ((await fetch(url).catch(() => null))?.ok ? true : undefined), 100);
  return { url, pid, stop };
}
