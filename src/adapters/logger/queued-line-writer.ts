import { closeSync, write, writeSync } from 'node:fs';

/** Lines dropped in one stretch, and why: written as one notice where they would have been. */
interface Gap {
  count: number;
  readonly reason: string;
}

/** Options of a QueuedLineWriter. */
export interface QueuedLineWriterOptions {
  /** Characters that may wait behind a write still under way; lines beyond are dropped and counted (default 1 MiB). */
  readonly maxQueued?: number;
  /** The line that stands for `count` lines dropped for `reason` (already formatted, newline included). */
  readonly notice: (count: number, reason: string) => string;
  /** Milliseconds since some fixed point (tests); `performance.now` by default. */
  readonly now?: () => number;
}

const DEFAULT_MAX_QUEUED = 1024 * 1024;
/** A non-blocking descriptor that is full is tried again after this long. */
const RETRY_MS = 20;
/** A write under way for longer than this is taken as stuck: the exit does not wait behind it. */
const STUCK_MS = 1000;
/** At most this many characters go in one write, so that one batch's buffer stays small. */
const MAX_BATCH = 256 * 1024;

/** Writers with lines not yet written, flushed synchronously when the process exits. */
const live = new Set<QueuedLineWriter>();
let exitHookInstalled = false;

/**
 * Lines to a file descriptor without ever holding the event loop on the write: each batch
 * goes out through libuv's thread pool, one write at a time so that lines keep their order,
 * and lines that come meanwhile wait in memory and leave together in the next write. A log
 * reader that stops reading (journald stalled, a container runtime's blocking log driver, a
 * pipe into a paused pager) or a disk that is slow to take a page would otherwise freeze the
 * agent inside `write()`: no renewal of its leader lock, no health check answered. What
 * cannot wait (past `maxQueued`) is dropped, and one notice says how many lines went missing
 * and why, in their place. When the process exits, what still waits is written synchronously.
 */
export class QueuedLineWriter {
  private readonly queue: Array<string | Gap> = [];
  /** Characters of the lines that wait (notices not counted): none waits when it is 0. */
  private queued = 0;
  private inFlight = false;
  private inFlightSince = 0;
  private retired: number | null = null;
  private drainWaiters: Array<() => void> = [];
  private readonly maxQueued: number;
  private readonly now: () => number;

  constructor(
    private fd: number,
    private readonly o: QueuedLineWriterOptions,
  ) {
    this.maxQueued = o.maxQueued ?? DEFAULT_MAX_QUEUED;
    this.now = o.now ?? (() => performance.now());
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.on('exit', () => {
        for (const w of live) w.flushSync();
      });
    }
  }

  /** Queues a line (newline included) and starts a write when none is under way. Never throws, never blocks. */
  readonly write = (line: string): void => {
    // Nothing to write; and `queued` stays a count of characters of lines that wait.
    if (line === '') return;
    if (this.queued + line.length > this.maxQueued) return this.drop(1, 'the log is written more slowly than lines come', false);
    // A queue that was empty is not among those the exit flushes yet.
    if (this.queue.push(line) === 1) live.add(this);
    this.queued += line.length;
    if (!this.inFlight) this.next();
  };

  /** Writes to `fd` from now on; the old descriptor is closed once no write is under way on it. */
  replaceFd(fd: number): void {
    const old = this.fd;
    this.fd = fd;
    if (this.inFlight) this.retired = old;
    else closeQuietly(old);
  }

  /** Resolves once every queued line is written, or after `timeoutMs` when the descriptor does not take them. */
  drained(timeoutMs = 2000): Promise<void> {
    if (!this.inFlight && this.queued === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      timer.unref();
      this.drainWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /**
   * Writes what waits, synchronously: for the process's exit, when no callback will run again.
   * A write stuck for over a second means the reader is gone or stalled, and a synchronous one
   * would hold the exit with it: those lines are given up. A write under way but not stuck may
   * still land after these lines.
   */
  flushSync(): void {
    if (this.inFlight && this.now() - this.inFlightSince > STUCK_MS) return;
    const { text } = this.take(Infinity);
    if (text === '') return;
    try {
      writeSync(this.fd, text);
    } catch {
      // Exiting: nowhere else to say it.
    }
  }

  private drop(count: number, reason: string, atFront: boolean): void {
    live.add(this);
    const edge = atFront ? this.queue[0] : this.queue[this.queue.length - 1];
    if (typeof edge === 'object' && edge.reason === reason) edge.count += count;
    else if (atFront) this.queue.unshift({ count, reason });
    else this.queue.push({ count, reason });
  }

  /** Joins queued lines (and notices of gaps) up to `limit` characters, at least one entry; with how many lines it holds. */
  private take(limit: number): { readonly text: string; readonly lines: number } {
    let text = '';
    let lines = 0;
    while (this.queue.length > 0) {
      const e = this.queue[0]!;
      const piece = typeof e === 'string' ? e : this.o.notice(e.count, e.reason);
      if (text !== '' && text.length + piece.length > limit) break;
      this.queue.shift();
      if (typeof e === 'string') {
        this.queued -= e.length;
        lines += 1;
      }
      text += piece;
    }
    if (this.queue.length === 0) live.delete(this);
    return { text, lines };
  }

  /** Starts the next write, or wakes those waiting for the queue to drain when no line waits. */
  private next(): void {
    if (this.queued === 0) {
      // Nothing but a notice of lost lines (or nothing) waits: the notice goes out with the next line.
      const waiters = this.drainWaiters;
      this.drainWaiters = [];
      for (const w of waiters) w();
      return;
    }
    const { text, lines } = this.take(MAX_BATCH);
    this.inFlight = true;
    this.inFlightSince = this.now();
    this.send(this.fd, Buffer.from(text), lines);
  }

  private send(fd: number, buf: Buffer, lines: number): void {
    write(fd, buf, 0, buf.length, null, (err, written) => {
      if (err?.code === 'EAGAIN') {
        setTimeout(() => this.send(fd, buf, lines), RETRY_MS).unref();
        return;
      }
      if (!err && written < buf.length) return this.send(fd, buf.subarray(written), lines);
      // A failed batch is not tried again: its lines become a notice, which the next write carries.
      if (err) this.drop(lines, `writing the log failed: ${err.code ?? err.message}`, true);
      this.inFlight = false;
      if (this.retired !== null) {
        closeQuietly(this.retired);
        this.retired = null;
      }
      this.next();
    });
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed: nothing to release.
  }
}
