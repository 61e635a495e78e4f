import { connect, createServer, type Server, type Socket } from 'node:net';
import { chmod, unlink } from 'node:fs/promises';
import type { Logger } from '../../ports/logger.js';
import { encodeLine, LineDecoder, type AgentMessage, type FenceReport, type FencerMessage } from './fencer-protocol.js';

/** What the fencer does with its agent's messages. */
export interface FencerHandlers {
  guard(remainingMs: number): void;
  unguard(): void;
  arm(timeoutSeconds: number): Promise<boolean>;
  kick(): Promise<boolean>;
  disarm(): Promise<boolean>;
  usable(): Promise<boolean>;
  /** The agent stops cleanly. */
  bye(): Promise<void>;
  /** The agent stops and leaves its primary running: true when the fencer guards its lock deadline without it. */
  handover(): Promise<boolean>;
  /** An agent attached (`adopted`: it replaces one that died). */
  attached(agentPid: number, adopted: boolean): void;
  /** The attached agent's connection closed without a goodbye: the agent died. */
  agentGone(agentPid: number): void;
  /** The last fencing stop (told to an agent that attaches after it), or null. */
  lastFence?(): FenceReport | null;
}

/** Whether something answers on the socket path (a live fencer), within a short time. */
function answering(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
    s.setTimeout(500, () => done(false));
  });
}

/**
 * The fencer's end of its Unix socket: one agent at a time may attach (a second one is
 * refused, so two agents never drive one data directory); an agent whose connection closes
 * without a goodbye has died. Binding the socket is the fencer's claim on the data
 * directory: a second fencer finds it answering and leaves.
 */
export class FencerSocketServer {
  private server: Server | null = null;
  private agent: { readonly socket: Socket; readonly pid: number } | null = null;
  private everAttached = false;

  constructor(
    private readonly socketPath: string,
    private readonly dataDir: string,
    private readonly handlers: FencerHandlers,
    private readonly logger: Logger,
  ) {}

  /**
   * Starts listening: `listening`; `guarded` when another fencer already answers on this socket;
   * otherwise why the socket could not be made (a directory in its place, no permission, ...).
   */
  async listen(): Promise<'listening' | 'guarded' | { readonly error: string }> {
    if (await answering(this.socketPath)) return 'guarded';
    // A socket file nobody answers on is a dead fencer's; anything else in its place is not removed.
    await unlink(this.socketPath).catch(() => undefined);
    const server = createServer((s) => this.accept(s));
    const failure = await new Promise<string | null>((resolve) => {
      server.once('error', (e: NodeJS.ErrnoException) => resolve(`${e.code ?? 'error'}: ${e.message}`));
      server.listen(this.socketPath, () => resolve(null));
    });
    if (failure !== null) return { error: failure };
    await chmod(this.socketPath, 0o600).catch(() => undefined);
    this.server = server;
    return 'listening';
  }

  /** Tells the attached agent (if any) of a fencing stop; a frozen agent reads it when it runs again. */
  reportFence(report: FenceReport): void {
    const socket = this.agent?.socket;
    if (socket && !socket.destroyed) socket.write(encodeLine({ type: 'fenced', id: 0, ...report }));
  }

  /** Whether an agent is attached now. */
  get hasAgent(): boolean {
    return this.agent !== null;
  }

  /** Stops listening and removes the socket file. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = null;
    this.agent?.socket.destroy();
    if (server) await new Promise<void>((r) => server.close(() => r()));
    await unlink(this.socketPath).catch(() => undefined);
  }

  private accept(socket: Socket): void {
    const decoder = new LineDecoder<AgentMessage>();
    let attachedPid: number | null = null;
    let saidBye = false;
    socket.setEncoding('utf8');
    const send = (m: FencerMessage) => {
      if (!socket.destroyed) socket.write(encodeLine(m));
    };
    socket.on('data', (chunk: string) => {
      for (const m of decoder.push(chunk)) {
        if (m.type === 'hello') {
          if (this.agent !== null && this.agent.socket !== socket) {
            send({ type: 'refused', id: m.id, reason: `another agent (pid ${this.agent.pid}) is attached to this fencer` });
            continue;
          }
          if (m.dataDir !== this.dataDir) {
            send({ type: 'refused', id: m.id, reason: `this fencer guards ${this.dataDir}, not ${m.dataDir}` });
            continue;
          }
          attachedPid = m.agentPid;
          const adopted = this.everAttached;
          this.agent = { socket, pid: m.agentPid };
          this.everAttached = true;
          this.handlers.attached(m.agentPid, adopted);
          const lastFence = this.handlers.lastFence?.() ?? null;
          send({ type: 'welcome', id: m.id, fencerPid: process.pid, dataDir: this.dataDir, adopted, ...(adopted && lastFence ? { lastFence } : {}) });
          continue;
        }
        // Only the attached agent commands the fencer.
        if (this.agent?.socket !== socket) continue;
        void this.dispatch(m, send, () => (saidBye = true));
      }
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.agent?.socket !== socket) return;
      this.agent = null;
      if (!saidBye && attachedPid !== null) this.handlers.agentGone(attachedPid);
    });
  }

  private async dispatch(m: AgentMessage, send: (m: FencerMessage) => void, bye: () => void): Promise<void> {
    const h = this.handlers;
    try {
      switch (m.type) {
        case 'guard':
          h.guard(m.remainingMs);
          return;
        case 'unguard':
          h.unguard();
          return;
        case 'arm':
          send({ type: 'result', id: m.id, ok: await h.arm(m.timeoutSeconds) });
          return;
        case 'kick':
          send({ type: 'result', id: m.id, ok: await h.kick() });
          return;
        case 'disarm':
          send({ type: 'result', id: m.id, ok: await h.disarm() });
          return;
        case 'usable':
          send({ type: 'result', id: m.id, ok: await h.usable() });
          return;
        case 'bye':
          bye();
          await h.bye();
          send({ type: 'result', id: m.id, ok: true });
          return;
        case 'handover':
          // Its connection closing next is the handover, not the agent's death.
          bye();
          send({ type: 'result', id: m.id, ok: await h.handover() });
          return;
        case 'hello':
          return;
      }
    } catch (error) {
      this.logger.error('fencer: a request failed', { type: m.type, error: error instanceof Error ? error.message : String(error) });
    }
  }
}
