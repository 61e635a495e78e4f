import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SystemClock } from '../../../../src/adapters/clock/system-clock.js';
import { FencerClient } from '../../../../src/adapters/fencer/fencer-client.js';
import { FencerSocketServer, type FencerHandlers } from '../../../../src/adapters/fencer/fencer-socket-server.js';
import { MemoryLogger } from '../../../../src/adapters/logger/memory-logger.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Handlers that record what reached the fencer. */
function recorder(): FencerHandlers & { events: string[] } {
  const events: string[] = [];
  let guarding = false;
  return {
    events,
    guard: (ms) => ((guarding = true), events.push(`guard ${ms > 0 ? '+' : '-'}`)),
    unguard: () => ((guarding = false), events.push('unguard')),
    arm: async (t) => (events.push(`arm ${t}`), true),
    kick: async () => (events.push('kick'), true),
    disarm: async () => (events.push('disarm'), true),
    usable: async () => true,
    bye: async () => void events.push('bye'),
    handover: async () => (events.push('handover'), guarding),
    attached: (_pid, adopted) => events.push(adopted ? 'adopted' : 'attached'),
    agentGone: () => events.push('gone'),
  };
}

describe('fencer socket: agent and fencer over a Unix socket', () => {
  let dir: string;
  let socket: string;
  const servers: FencerSocketServer[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fencer-'));
    socket = join(dir, 'f.sock');
  });
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const client = (dataDir = '/data') => new FencerClient({ socketPath: socket, dataDir, spawn: null, clock: new SystemClock(), logger: new MemoryLogger(), startTimeoutMs: 200 });

  async function server(h: FencerHandlers, dataDir = '/data'): Promise<FencerSocketServer> {
    const s = new FencerSocketServer(socket, dataDir, h, new MemoryLogger());
    expect(await s.listen()).to.equal('listening');
    servers.push(s);
    return s;
  }

  it('an agent attaches, reports its lease, drives the device, and says goodbye; the fencer sees no death', async () => {
    const h = recorder();
    await server(h);
    const c = client();
    expect(await c.attach()).to.equal(true);
    expect(c.status().state).to.equal('idle');
    c.guard(Date.now() + 20_000);
    expect(c.status().state).to.equal('guarding');
    expect(await c.activate(15)).to.equal(true);
    expect(await c.keepalive()).to.equal(true);
    c.unguard();
    await c.detach();
    await sleep(50);
    expect(h.events).to.deep.equal(['attached', 'guard +', 'arm 15', 'kick', 'unguard', 'bye']);
  });

  it('an agent that hands its lease over is not reported dead, hears whether the fencer guards it, and a restarted one adopts the fencer', async () => {
    const h = recorder();
    await server(h);
    const first = client();
    await first.attach();
    first.guard(Date.now() + 20_000);
    expect(await first.handover()).to.equal(true);
    await sleep(50);
    expect(h.events).to.deep.equal(['attached', 'guard +', 'handover']);
    // The agent is done with the fencer: a detach after the handover sends nothing.
    await first.detach();
    const next = client();
    expect(await next.attach()).to.equal(true);
    expect(h.events.at(-1)).to.equal('adopted');
    // A fencer that guards nothing answers false: the agent must stop its server itself.
    next.unguard();
    expect(await next.handover()).to.equal(false);
    expect(await client().handover()).to.equal(false);
  });

  it('an agent that goes away without goodbye is reported dead; a restarted one adopts the fencer', async () => {
    const h = recorder();
    await server(h);
    const first = client();
    await first.attach();
    (first as unknown as { socket: { destroy(): void } }).socket.destroy();
    await sleep(50);
    expect(h.events).to.deep.equal(['attached', 'gone']);
    expect(await client().attach()).to.equal(true);
    expect(h.events.at(-1)).to.equal('adopted');
  });

  it('a second agent, or an agent of another data directory, is refused; a second fencer finds the socket taken', async () => {
    const h = recorder();
    await server(h);
    expect(await client().attach()).to.equal(true);
    const second = client();
    expect(await second.attach()).to.equal(false);
    expect(second.status()).to.deep.include({ state: 'unavailable' });
    expect(second.status().reason).to.match(/another agent/);
    const other = new FencerSocketServer(socket, '/data', recorder(), new MemoryLogger());
    expect(await other.listen()).to.equal('guarded');
  });

  it("something else in the socket's place (a directory) is not removed: listen() says why", async () => {
    await mkdir(socket);
    try {
      const blocked = new FencerSocketServer(socket, '/data', recorder(), new MemoryLogger());
      const result = await blocked.listen();
      expect(result).to.be.an('object');
      expect((result as { error: string }).error).to.match(/^EADDRINUSE|^EISDIR|^ENOTSOCK|^EACCES/);
    } finally {
      await rmdir(socket);
    }
  });

  it('a stale socket file of a dead fencer is taken over; no fencer at all leaves the client unavailable, not stuck', async () => {
    const h = recorder();
    const dead = await server(h);
    await dead.close();
    const c = client();
    expect(await c.attach()).to.equal(false);
    expect(c.status().state).to.equal('unavailable');
    expect(await c.activate(15), 'the watchdog through a missing fencer is not usable').to.equal(false);
    await server(recorder());
    expect(await client().attach()).to.equal(true);
    const wrongDir = client('/elsewhere');
    expect(await wrongDir.attach()).to.equal(false);
  });
});
