import { performance } from 'node:perf_hooks';

/** One window of an agent's event-loop delay as its /metrics reported it (ms). */
export interface DelayWindow {
  /** When the poll that first saw it ran (performance.now(), ms): the window ended at most one poll interval before. */
  readonly seenAt: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** The event-loop delay figures of an agent's /metrics text (seconds), or undefined when it has none yet. */
export function parseEventLoopDelay(text: string): { p50: number; p99: number; max: number; count: number } | undefined {
  const pick = (re: RegExp) => {
    const m = re.exec(text);
    return m ? Number(m[1]) : undefined;
  };
  const p50 = pick(/^svc_event_loop_delay_seconds\{[^}]*quantile="0\.5"\} (\S+)$/m);
  const p99 = pick(/^svc_event_loop_delay_seconds\{[^}]*quantile="0\.99"\} (\S+)$/m);
  const max = pick(/^svc_event_loop_delay_max_seconds\{[^}]*\} (\S+)$/m);
  const count = pick(/^svc_event_loop_delay_seconds_count\{[^}]*\} (\S+)$/m);
  return p50 === undefined || p99 === undefined || max === undefined || count === undefined ? undefined : { p50, p99, max, count };
}

/**
 * Reads an agent's /metrics every `everyMs` and keeps each completed event-loop window it
 * reports (a new window shows as a change of the summary's count).
 */
export class EventLoopPoller {
  readonly windows: DelayWindow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastCount: number | undefined;
  private busy = false;

  constructor(
    private readonly apiUrl: string,
    private readonly everyMs = 500,
  ) {}

  start(): this {
    this.timer = setInterval(() => void this.poll(), this.everyMs);
    void this.poll();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  /** Windows that started at or after `from` and were seen by `to` (performance.now() ms); `windowMs` is the agent's window length. */
  within(from: number, to: number, windowMs: number): DelayWindow[] {
    return this.windows.filter((w) => w.seenAt - this.everyMs - windowMs >= from - this.everyMs && w.seenAt <= to + this.everyMs);
  }

  private async poll(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const r = await fetch(`${this.apiUrl}/metrics`, { signal: AbortSignal.timeout(2000) });
      const d = parseEventLoopDelay(await r.text());
      if (!d) return;
      if (this.lastCount !== undefined && d.count !== this.lastCount) this.windows.push({ seenAt: performance.now(), p50: d.p50 * 1000, p99: d.p99 * 1000, max: d.max * 1000 });
      this.lastCount = d.count;
    } catch {
      // An agent restarting its API (a demotion does not) or a slow answer: the next poll tries again.
    } finally {
      this.busy = false;
    }
  }
}
