import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** The event loop's delay over one window, in seconds. */
export interface EventLoopDelayWindow {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Samples taken (one per resolution interval while the loop was free to take them). */
  readonly samples: number;
}

/** What the metrics show of the event loop: the last completed window and the totals since start. */
export interface EventLoopDelaySource {
  /** Length of a window, seconds. */
  readonly windowSeconds: number;
  /** The last completed window; null before the first one ends. */
  lastWindow(): EventLoopDelayWindow | null;
  /** Sum of every sample since start, seconds, and their count (a summary's `_sum` and `_count`). */
  totals(): { readonly sum: number; readonly count: number; readonly max: number };
}

const NS = 1e-9;

/**
 * The agent's own event-loop delay, from `perf_hooks.monitorEventLoopDelay` (a libuv timer
 * that records how late it fires, no JavaScript per sample): every `windowMs` the histogram is
 * read into a window figure (p50, p99, max) and reset, so the figures describe the recent past
 * rather than everything since start. A health check waits behind whatever holds the loop,
 * so this is the part of its latency the agent itself causes.
 *
 * The default resolution of 10 ms is Node's: a 1 ms timer costs ~2 % of a core on an idle
 * agent (measured), and a block of the loop longer than the resolution is always seen.
 */
export class EventLoopDelayMonitor implements EventLoopDelaySource {
  readonly windowSeconds: number;
  private readonly histogram: IntervalHistogram;
  private timer: NodeJS.Timeout | null = null;
  private last: EventLoopDelayWindow | null = null;
  private sum = 0;
  private count = 0;
  private maxEver = 0;

  constructor(opts: { readonly resolutionMs?: number; readonly windowMs?: number } = {}) {
    this.histogram = monitorEventLoopDelay({ resolution: opts.resolutionMs ?? 10 });
    this.windowSeconds = (opts.windowMs ?? 10_000) / 1000;
  }

  /** Starts sampling; the first window ends `windowSeconds` later. */
  start(): this {
    if (this.timer !== null) return this;
    this.histogram.enable();
    this.timer = setInterval(() => this.rotate(), this.windowSeconds * 1000);
    this.timer.unref();
    return this;
  }

  /** Stops sampling (the figures so far stay readable). */
  stop(): void {
    if (this.timer === null) return;
    clearInterval(this.timer);
    this.timer = null;
    this.histogram.disable();
  }

  lastWindow(): EventLoopDelayWindow | null {
    return this.last;
  }

  totals(): { readonly sum: number; readonly count: number; readonly max: number } {
    return { sum: this.sum, count: this.count, max: this.maxEver };
  }

  /** Ends the current window: its figures become the last window's, the histogram starts over. */
  rotate(): void {
    const h = this.histogram;
    const samples = h.count;
    if (samples === 0) {
      this.last = { p50: 0, p99: 0, max: 0, samples: 0 };
    } else {
      this.last = { p50: h.percentile(50) * NS, p99: h.percentile(99) * NS, max: h.max * NS, samples };
      this.sum += h.mean * NS * samples;
      this.count += samples;
      this.maxEver = Math.max(this.maxEver, this.last.max);
    }
    h.reset();
  }
}
