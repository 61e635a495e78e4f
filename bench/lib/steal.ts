import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/stat's figures (USER_HZ, 100 on Linux whatever the kernel's HZ). */
const USER_HZ = 100;
/** How often the sampler reads /proc/stat: the figures' "in a second" is one interval. */
const SAMPLE_MS = 1000;

/** The hypervisor's take over a period: steal time of all this machine's CPUs together. */
export interface StealFigures {
  /** Steal time over the period, ms per second of it. */
  readonly msPerSecond: number;
  /** The most in one second (one sampling interval), ms. */
  readonly maxMs: number;
}

/** Steal time of all CPUs so far, ms; undefined where /proc/stat has no such figure. */
function stealMs(): number | undefined {
  try {
    const first = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    const steal = Number(first.trim().split(/\s+/)[8]);
    return Number.isFinite(steal) ? (steal * 1000) / USER_HZ : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Samples the machine's steal time: on a virtual machine, time in which the host ran something
 * else while this machine's CPUs had work. A guest kernel that accounts it (paravirtual time
 * accounting) counts it neither as a thread's time on a CPU nor as its wait for one, so an
 * event loop held up by it looks, from inside, as if it had stopped for no reason.
 */
export class StealSampler {
  private readonly samples: { readonly at: number; readonly ms: number }[] = [];

  /** Samples from now on, for as long as the process runs (the timer does not keep it alive). */
  start(): this {
    this.sample();
    setInterval(() => this.sample(), SAMPLE_MS).unref();
    return this;
  }

  /** Steal between `from` and `to` (epoch ms), from the samples inside it; undefined without two. */
  within(from: number, to: number): StealFigures | undefined {
    const inside = this.samples.filter((s) => s.at >= from && s.at <= to);
    const first = inside[0];
    const last = inside.at(-1);
    if (!first || !last || last.at === first.at) return undefined;
    let maxMs = 0;
    for (let i = 1; i < inside.length; i++) maxMs = Math.max(maxMs, inside[i]!.ms - inside[i - 1]!.ms);
    return { msPerSecond: ((last.ms - first.ms) * 1000) / (last.at - first.at), maxMs };
  }

  /** Steal over the shortest span of samples that covers `from`..`to` (epoch ms): total ms and the span's length; undefined when none covers it. */
  around(from: number, to: number): { readonly ms: number; readonly spanMs: number } | undefined {
    const before = this.samples.filter((s) => s.at <= from).at(-1);
    const after = this.samples.find((s) => s.at >= to);
    return before && after ? { ms: after.ms - before.ms, spanMs: after.at - before.at } : undefined;
  }

  private sample(): void {
    const ms = stealMs();
    if (ms !== undefined) this.samples.push({ at: Date.now(), ms });
  }
}
