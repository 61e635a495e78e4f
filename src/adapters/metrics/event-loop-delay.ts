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
 * every `resolutionMs`, no JavaScript per sample): every `windowMs` the histogram is read
 * into a window figure (p50, p99, max) and reset, so the figures describe the recent past
 * rather than everything since start. The histogram holds the intervals between the timer's
 * runs; the delay is what an interval lasted beyond the resolution. A health check waits
 * behind whatever holds the loop, so this is the part of its latency the agent's own work
 * (and the machine's other work) causes.
 *
 * The default resolution of 10 ms is Node's: a 1 ms timer costs ~2 % of a core on an idle
 * agent (measured), and a block of the loop longer than the resolution is always seen.
 */
export class EventLoopDelayMonitor implements EventLoopDelaySource {
  readonly windowSeconds: number;
  private readonly histogram: IntervalHistogram;
  private readonly resolutionNs: number;
  private timer: NodeJS.Timeout | null = null;
  private last: EventLoopDelayWindow | null = null;
  private sum = 0;
  private count = 0;
  private maxEver = 0;

  constructor(opts: { readonly resolutionMs?: number; readonly windowMs?: number } = {}) {
    const resolution = opts.resolutionMs ?? 10;
    this.histogram = monitorEventLoopDelay({ resolution });
    this.resolutionNs = resolution * 1e6;
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
      const delay = (intervalNs: number) => Math.max(0, intervalNs - this.resolutionNs) * NS;
      this.last = { p50: delay(h.percentile(50)), p99: delay(h.percentile(99)), max: delay(h.max), samples };
      this.sum += delay(h.mean) * samples;
      this.count += samples;
      this.maxEver = Math.max(this.maxEver, this.last.max);
    }
    h.reset();
  }
}
