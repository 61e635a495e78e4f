import { spawn } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import { ensurePrivateSocketDir, foreignSocketProblem } from './fencer-socket-path.js';
import { connect, type Socket } from 'node:net';
import type { Clock } from '../../ports/clock.js';
import type { Fencer, FencerStatus, FencingReport } from '../../ports/fencer.js';
import type { Logger } from '../../ports/logger.js';
import type { Watchdog } from '../../ports/watchdog.js';
import { encodeLine, LineDecoder, type AgentMessage, type FencerMessage } from './fencer-protocol.js';

/** How to start the fencer process when none answers. */
export interface FencerSpawn {
  readonly command: string;
  readonly args: readonly string[];
  /** Where its output goes (appended). */
  readonly logFile: string;
}

/** Options of the agent's end of the fencer. */
export interface FencerClientOptions {
  readonly socketPath: string;
  /** The data directory the fencer must guard (checked on attach). */
  readonly dataDir: string;
  /** How to start a fencer; null: only adopt a running one. */
  readonly spawn: FencerSpawn | null;
  readonly clock: Clock;
  readonly logger: Logger;
  /** How long attach() waits for a new fencer to answer (default 5000 ms). */
  readonly startTimeoutMs?: number;
}

/** Bound of a request to the fencer (the watchdog port's deadline). */
const REQUEST_MS = 1000;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * The agent's end of its fencer: starts the fencer process (detached, so it outlives the
 * agent) or adopts the one already guarding the data directory, reports every lock deadline
 * to it, and drives the watchdog device through it (the fencer owns the device, so a frozen
 * agent cannot keep it alive). Implements Fencer and Watchdog; nothing here throws or blocks.
 */
export class FencerClient implements Fencer, Watchdog {
  private socket: Socket | null = null;
  private state: FencerStatus = { state: 'unavailable', reason: 'not attached yet' };
  private nextId = 1;
  private readonly pending = new Map<number, (m: FencerMessage | null) => void>();
  private armed = false;
  private guarding = false;
  private lastDeadline: number | null = null;
  private detached = false;
  private reattach: Promise<boolean> | null = null;
  private fencedListener: (report: FencingReport) => void = () => {};

  constructor(private readonly o: FencerClientOptions) {}

  status(): FencerStatus {
    return this.state;
  }

  onFenced(listener: (report: FencingReport) => void): void {
    this.fencedListener = listener;
  }

  private heardFence(r: { reason: string; durationMs: number; stopped: boolean; agoMs: number }): void {
    this.o.logger.warn(`the fencer stopped PostgreSQL ${Math.round(r.agoMs / 1000)} s ago: ${r.reason}`, { duration_ms: r.durationMs, stopped: r.stopped });
    try {
      this.fencedListener({ reason: r.reason, durationMs: r.durationMs, stopped: r.stopped, at: this.o.clock.now() - r.agoMs });
    } catch {
      // A listener's failure must not break the fencer connection.
    }
  }

  async attach(): Promise<boolean> {
    this.detached = false;
    if (this.socket) return true;
    try {
      ensurePrivateSocketDir(this.o.socketPath);
    } catch (e) {
      return this.unavailable(`its socket's folder is not private: ${(e as Error).message}`);
    }
    const foreign = foreignSocketProblem(this.o.socketPath);
    if (foreign !== null) return this.unavailable(foreign);
    let socket = await this.connect();
    if (!socket && this.o.spawn) {
      this.start(this.o.spawn);
      const deadline = Date.now() + (this.o.startTimeoutMs ?? 5000);
      while (!socket && Date.now() < deadline) {
        await sleep(50);
        socket = await this.connect();
      }
    }
    if (!socket) return this.unavailable('the fencer did not answer on its socket');
    this.use(socket);
    const reply = await this.request({ type: 'hello', id: this.id(), agentPid: process.pid, dataDir: this.o.dataDir }, 3000);
    if (reply?.type !== 'welcome') {
      socket.destroy();
      return this.unavailable(reply?.type === 'refused' ? reply.reason : 'the fencer did not welcome the agent');
    }
    this.o.logger.info(reply.adopted ? 'adopted the running fencer' : 'fencer attached', { fencer_pid: reply.fencerPid, socket: this.o.socketPath });
    if (reply.lastFence) this.heardFence(reply.lastFence);
    this.state = { state: this.guarding ? 'guarding' : 'idle', reason: null };
    // A deadline reported while detached must reach the new fencer.
    if (this.guarding && this.lastDeadline !== null) this.guard(this.lastDeadline);
    return true;
  }

  guard(deadline: number): void {
    this.guarding = true;
    this.lastDeadline = deadline;
    if (this.state.state !== 'unavailable' && this.state.state !== 'off') this.state = { state: 'guarding', reason: null };
    if (!this.send({ type: 'guard', remainingMs: deadline - this.o.clock.now() })) this.tryReattach();
  }

  unguard(): void {
    this.guarding = false;
    this.lastDeadline = null;
    if (this.state.state === 'guarding') this.state = { state: 'idle', reason: null };
    this.send({ type: 'unguard' });
  }

  async detach(): Promise<void> {
    this.detached = true;
    if (!this.socket) return;
    await this.request({ type: 'bye', id: this.id() }, REQUEST_MS);
    this.socket?.destroy();
    this.socket = null;
  }

  async handover(): Promise<boolean> {
    this.detached = true;
    if (!this.socket) return false;
    const reply = await this.request({ type: 'handover', id: this.id() }, REQUEST_MS);
    this.socket?.destroy();
    this.socket = null;
    return reply?.type === 'result' && reply.ok;
  }

  // ------------------------------------------------------------------ Watchdog

  get isActive(): boolean {
    return this.armed;
  }

  async activate(timeoutSeconds: number): Promise<boolean> {
    const r = await this.request({ type: 'arm', id: this.id(), timeoutSeconds }, REQUEST_MS);
    this.armed = r?.type === 'result' && r.ok;
    return this.armed;
  }

  async keepalive(): Promise<boolean> {
    const r = await this.request({ type: 'kick', id: this.id() }, REQUEST_MS);
    return r?.type === 'result' && r.ok;
  }

  async disable(): Promise<void> {
    this.armed = false;
    await this.request({ type: 'disarm', id: this.id() }, REQUEST_MS);
  }

  async isUsable(): Promise<boolean> {
    const r = await this.request({ type: 'usable', id: this.id() }, REQUEST_MS);
    return r?.type === 'result' && r.ok;
  }

  // ------------------------------------------------------------------ internals

  private id(): number {
    return this.nextId++;
  }

  private unavailable(reason: string): false {
    if (this.state.reason !== reason) this.o.logger.warn(`the fencer is unavailable: ${reason}`);
    this.state = { state: 'unavailable', reason };
    return false;
  }

  private connect(): Promise<Socket | null> {
    return new Promise((resolve) => {
      const s = connect(this.o.socketPath);
      s.once('connect', () => {
        s.removeAllListeners('error');
        resolve(s);
      });
      s.once('error', () => {
        s.destroy();
        resolve(null);
      });
    });
  }

  private start(how: FencerSpawn): void {
    let fd: number | null = null;
    try {
      // Never through a link someone put in the log's place.
      fd = openSync(how.logFile, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, 0o640);
      const child = spawn(how.command, [...how.args], { detached: true, stdio: ['ignore', fd, fd] });
      child.on('error', (e) => this.unavailable(`cannot start the fencer: ${e.message}`));
      child.unref();
      this.o.logger.info('started the fencer', { pid: child.pid, log: how.logFile });
    } catch (e) {
      this.unavailable(`cannot start the fencer: ${(e as Error).message}`);
    } finally {
      if (fd !== null) closeSync(fd);
    }
  }

  private use(socket: Socket): void {
    this.socket = socket;
    const decoder = new LineDecoder<FencerMessage>();
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      for (const m of decoder.push(chunk)) {
        if (m.type === 'fenced') {
          this.heardFence(m);
          continue;
        }
        const waiter = this.pending.get(m.id);
        if (waiter) {
          this.pending.delete(m.id);
          waiter(m);
        }
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.armed = false;
      for (const [, w] of this.pending) w(null);
      this.pending.clear();
      if (!this.detached) {
        this.unavailable('the fencer went away');
        this.tryReattach();
      }
    });
  }

  /** A lost fencer is replaced in the background (a guard must find one again soon). */
  private tryReattach(): void {
    if (this.detached || this.reattach) return;
    this.reattach = (async () => {
      await sleep(500);
      return this.attach();
    })().finally(() => {
      this.reattach = null;
    });
  }

  private send(m: AgentMessage): boolean {
    const s = this.socket;
    if (!s || s.destroyed) return false;
    s.write(encodeLine(m));
    return true;
  }

  private request(m: AgentMessage & { readonly id: number }, timeoutMs: number): Promise<FencerMessage | null> {
    return new Promise((resolve) => {
      if (!this.send(m)) return resolve(null);
      const timer = setTimeout(() => {
        this.pending.delete(m.id);
        resolve(null);
      }, timeoutMs);
      this.pending.set(m.id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
    });
  }
}
