import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Etcd3KeyValue } from '../../../../src/adapters/cluster-store/etcd3-key-value.js';
import { WATCH_LIVE_KEY } from '../../../../src/adapters/cluster-store/etcd3-watch.js';
import { clusterPrefix } from '../../../../src/adapters/cluster-store/keys.js';
import { DcsUnavailableError } from '../../../../src/domain/errors.js';
import type { KeyValueStore } from '../../../../src/adapters/cluster-store/key-value.js';
import { startEtcd, type EtcdServer } from '../../../support/etcd-server.js';

const RETRY_TIMEOUT_MS = 1500;
/** Scheduling slack on a shared 2-core machine. */
const MARGIN_MS = 500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Every port call, each timed: [name, ms, error]. */
async function timedCalls(dcs: KeyValueStore): Promise<Array<[string, number, unknown]>> {
  const calls: Array<[string, () => Promise<unknown>]> = [
    ['readAll', () => dcs.readAll()],
    ['keepAlive', () => dcs.keepAlive(2)],
    ['create', () => dcs.create('initialize', 'x')],
    ['leased put', () => dcs.put('members/a', '{}', { leased: true })],
    ['conditional put', () => dcs.put('config', '{}', { if: { revision: '1' } })],
    ['delete', () => dcs.delete('config', { value: '{}' })],
    ['revokeLease', () => dcs.revokeLease()],
  ];
  return Promise.all(
    calls.map(async ([name, call]): Promise<[string, number, unknown]> => {
      const started = Date.now();
      try {
        await call();
        return [name, Date.now() - started, undefined];
      } catch (e) {
        return [name, Date.now() - started, e];
      }
    }),
  );
}

function expectAllUnavailable(results: Array<[string, number, unknown]>, boundMs: number): void {
  for (const [name, ms, error] of results) {
    expect(error, `${name} should fail`).to.be.instanceOf(DcsUnavailableError);
    expect((error as DcsUnavailableError).code).to.equal('dcs_unavailable');
    expect(ms, `${name} took ${ms} ms`).to.be.at.most(boundMs);
  }
}

describe('Etcd3KeyValue: etcd down, hung, and back (real etcd)', function () {
  this.timeout(30_000);
  let server: EtcdServer;
  const clients: Etcd3KeyValue[] = [];
  let run = 0;
  let prefix = '';

  const dcs = () => {
    const c = new Etcd3KeyValue({ hosts: [server.host], prefix, retryTimeoutMs: RETRY_TIMEOUT_MS });
    clients.push(c);
    return c;
  };

  before(async () => {
    server = await startEtcd();
  });

  beforeEach(() => {
    prefix = clusterPrefix('/warden-outage', `run${++run}`);
  });

  afterEach(async () => {
    server.thaw();
    await Promise.all(clients.splice(0).map((c) => c.close()));
    if (!server.pid) await server.restart();
  });

  after(async () => {
    await server?.cleanup();
  });

  it('with etcd stopped, every call fails with DcsUnavailableError within retry_timeout', async () => {
    const a = dcs();
    await a.keepAlive(2);
    await server.stop();
    const results = await timedCalls(a);
    console.log(`      etcd stopped: ${results.map(([n, ms]) => `${n} ${ms} ms`).join(', ')}`);
    expectAllUnavailable(results, RETRY_TIMEOUT_MS + MARGIN_MS);
  });

  it('with etcd hung (SIGSTOP), calls give up at retry_timeout instead of hanging, and work after it resumes', async () => {
    const a = dcs();
    await a.keepAlive(2);
    await a.put('config', '{}');
    server.freeze();
    const results = await timedCalls(a);
    console.log(`      etcd hung: ${results.map(([n, ms]) => `${n} ${ms} ms`).join(', ')}`);
    expectAllUnavailable(results, RETRY_TIMEOUT_MS + MARGIN_MS);
    for (const [name, ms] of results) expect(ms, `${name} waited for the deadline`).to.be.at.least(RETRY_TIMEOUT_MS - 50);
    server.thaw();
    // A call that timed out may still be applied once etcd resumes: a timeout means "unknown outcome".
    expect(await a.readAll()).to.be.instanceOf(Map);
    expect(await a.put('config', '{"resumed":true}')).to.equal(true);
    expect(await a.keepAlive(2)).to.be.a('boolean');
  });

  it('after etcd restarts, the watch wakes the agent and reports changes again', async () => {
    const a = dcs();
    const seen: string[] = [];
    a.watch((key) => seen.push(key));
    await until('the wake when the watch is live', () => seen.includes(WATCH_LIVE_KEY), 5000);
    await a.put('probe', '1');
    await until('the first event', () => seen.includes('probe'), 5000);

    await server.stop();
    seen.length = 0;
    await sleep(300);
    const restartedAt = Date.now();
    await server.restart();
    await until('a wake after the reconnect', () => seen.includes(WATCH_LIVE_KEY), 5000);
    console.log(`      watch woke ${Date.now() - restartedAt} ms after etcd was back`);
    await a.put('config', '{"after":"restart"}');
    await until('the change made after the restart', () => seen.includes('config'), 5000);
  });

  it('keys changed while the watch was disconnected are reported once it is back', async () => {
    const a = dcs();
    const b = dcs();
    const seen: string[] = [];
    a.watch((key) => seen.push(key));
    await until('the wake when the watch is live', () => seen.includes(WATCH_LIVE_KEY), 5000);
    await b.put('probe', '1');
    await until('the first event', () => seen.includes('probe'), 5000);
    // Stop etcd so a's watch stream breaks; b writes as soon as etcd is back, before a reconnects.
    await server.stop();
    seen.length = 0;
    await server.restart();
    await b.put('failover', '{"member":"b"}');
    // a's watch resumes from the last revision it saw, so the write is reported, not only a wake.
    await until('the failover key', () => seen.includes('failover'), 5000);
  });

  it('close() leaves nothing running: a process that used the adapter exits on its own', async function () {
    const fixture = fileURLToPath(new URL('./fixtures/close-then-exit.ts', import.meta.url));
    const runChild = async (): Promise<{ out: string; exitAfterCloseMs: number; code: number | null }> => {
      const child = spawn(process.execPath, ['--import', 'tsx', fixture, server.host], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let closedAt = 0;
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        if (!closedAt && out.includes('closed')) closedAt = Date.now();
      });
      child.stderr.on('data', (b: Buffer) => (out += b.toString()));
      const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
      clearTimeout(killer);
      return { out, exitAfterCloseMs: closedAt ? Date.now() - closedAt : -1, code };
    };

    const up = await runChild();
    expect(up.out, up.out).to.match(/closed ok,ok,ok/);
    await server.stop();
    const down = await runChild();
    expect(down.out, down.out).to.match(/closed DcsUnavailableError,DcsUnavailableError,DcsUnavailableError/);
    console.log(`      child exit after close(): etcd up ${up.exitAfterCloseMs} ms, etcd down ${down.exitAfterCloseMs} ms`);
    for (const r of [up, down]) {
      expect(r.code).to.equal(0);
      expect(r.exitAfterCloseMs, 'exits right after close()').to.be.within(0, 1500);
    }
  });
});
