/**
 * The messages between an agent and its fencer: one JSON object per line over a Unix socket.
 * Times travel as durations (the remaining lease), so the two processes need no common clock.
 */

/** What the agent sends. `id` ties a request to its reply. */
export type AgentMessage =
  | { readonly type: 'hello'; readonly id: number; readonly agentPid: number; readonly dataDir: string }
  | { readonly type: 'guard'; readonly remainingMs: number }
  | { readonly type: 'unguard' }
  | { readonly type: 'arm'; readonly id: number; readonly timeoutSeconds: number }
  | { readonly type: 'kick'; readonly id: number }
  | { readonly type: 'disarm'; readonly id: number }
  | { readonly type: 'usable'; readonly id: number }
  | { readonly type: 'bye'; readonly id: number }
  /** The agent stops and leaves its primary running: keep guarding the deadline without it (result: whether it guards). */
  | { readonly type: 'handover'; readonly id: number };

/** A fencing stop, as the fencer reports it: why, how long it took, whether PostgreSQL is down, how long ago. */
export interface FenceReport {
  readonly reason: string;
  readonly durationMs: number;
  readonly stopped: boolean;
  readonly agoMs: number;
}

/** What the fencer answers (and `fenced`, which it sends unasked to the attached agent). */
export type FencerMessage =
  | { readonly type: 'welcome'; readonly id: number; readonly fencerPid: number; readonly dataDir: string; readonly adopted: boolean; readonly lastFence?: FenceReport }
  | ({ readonly type: 'fenced'; readonly id: 0 } & FenceReport)
  | { readonly type: 'refused'; readonly id: number; readonly reason: string }
  | { readonly type: 'result'; readonly id: number; readonly ok: boolean };

/** Splits a byte stream into JSON lines; malformed lines are dropped. */
export class LineDecoder<T> {
  private buffer = '';

  /** The complete messages in `chunk` (with what was buffered before). */
  push(chunk: string): T[] {
    this.buffer += chunk;
    const out: T[] = [];
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + 1);
      if (!line.trim()) continue;
      try {
        const value = JSON.parse(line) as unknown;
        if (value !== null && typeof value === 'object' && typeof (value as { type?: unknown }).type === 'string') out.push(value as T);
      } catch {
        // A line that is not JSON cannot be from a peer of this protocol.
      }
    }
    // A runaway line from a stranger must not grow without bound.
    if (this.buffer.length > 64 * 1024) this.buffer = '';
    return out;
  }
}

/** One message as a line. */
export function encodeLine(message: AgentMessage | FencerMessage): string {
  return `${JSON.stringify(message)}\n`;
}
