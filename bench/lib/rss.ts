import { readFileSync } from 'node:fs';

/** A field of /proc/<pid>/status in MiB (the kernel writes kB); undefined once the process is gone. */
function statusMiB(pid: number, field: string): number | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith(`${field}:`));
    return line ? Number(line.split(/\s+/)[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Resident set size of a process in MiB, from VmRSS in /proc/<pid>/status; undefined once it is gone. */
export function rssMiB(pid: number): number | undefined {
  return statusMiB(pid, 'VmRSS');
}

/**
 * RSS split in private memory (RssAnon: heaps, code compiled at run time) and mapped files
 * (RssFile: mostly the node binary, shared by every Node process on the machine), MiB.
 */
export function rssSplitMiB(pid: number): { rss: number; anon: number; file: number } | undefined {
  const [rss, anon, file] = ['VmRSS', 'RssAnon', 'RssFile'].map((f) => statusMiB(pid, f));
  return rss === undefined || anon === undefined || file === undefined ? undefined : { rss, anon, file };
}

/** Samples a process's RSS every `everyMs` until stopped; reports the peak and the last value. */
export class RssSampler {
  private timer: NodeJS.Timeout | undefined;
  peakMiB = 0;
  lastMiB = 0;

  constructor(private readonly pid: number, private readonly everyMs = 100) {}

  start(): this {
    this.sample();
    this.timer = setInterval(() => this.sample(), this.everyMs);
    return this;
  }

  private sample(): void {
    const v = rssMiB(this.pid);
    if (v === undefined) return;
    this.lastMiB = v;
    this.peakMiB = Math.max(this.peakMiB, v);
  }

  /** Stops sampling (after one final sample) and returns the peak in MiB. */
  stop(): number {
    if (this.timer) clearInterval(this.timer);
    this.sample();
    return this.peakMiB;
  }
}
