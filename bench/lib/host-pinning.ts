import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

/**
 * One node of the benchmark's cluster given a CPU of its own, everything else on the others:
 * on a real cluster one host runs one agent and its PostgreSQL, while the other members, etcd
 * and the load balancer are elsewhere. Affinity is set with `taskset` (util-linux) for every
 * thread; what a pinned process starts later inherits its CPU.
 */

/** The CPU list a process's threads may run on (`Cpus_allowed_list`), or undefined once it is gone. */
function allowedCpus(pid: number): string | undefined {
  try {
    return /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

/** Pins every thread of `pid` to `cpus` (a taskset list, e.g. "0" or "1-3"); false if it is gone. */
export function pinProcess(pid: number, cpus: string): boolean {
  try {
    execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** The children of every thread of `pid` (/proc/<pid>/task/<tid>/children). */
function childrenOf(pid: number): number[] {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  return tids.flatMap((tid) => {
    try {
      return readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
}

/** `pid` and all its descendants. */
function withDescendants(pid: number): number[] {
  const out: number[] = [];
  const todo = [pid];
  while (todo.length > 0) {
    const p = todo.pop()!;
    out.push(p);
    todo.push(...childrenOf(p));
  }
  return out;
}

/** The CPU the pinned node gets (0) and the list the rest runs on ("1-N"), or undefined on a machine of one CPU. */
export function hostSplit(): { host: string; rest: string } | undefined {
  const n = availableParallelism();
  return n < 2 ? undefined : { host: '0', rest: n === 2 ? '1' : `1-${n - 1}` };
}

/**
 * Keeps the processes of one node (roots such as its agent, fencer and postmaster, read again
 * at every scan because a postmaster restarts, and all their descendants) on the host CPU.
 * A process started by a pinned one is already there; the scan catches the rest (a server
 * started before the pinning, a daemon reparented away).
 */
export class HostPinner {
  private timer: NodeJS.Timeout | null = null;
  /** Processes moved to the host CPU so far. */
  moved = 0;

  constructor(
    private readonly cpus: string,
    private readonly roots: () => readonly (number | undefined)[],
    private readonly everyMs = 100,
  ) {}

  start(): this {
    this.scan();
    this.timer = setInterval(() => this.scan(), this.everyMs);
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Pins whatever of the roots' trees is not on the host CPU yet. */
  scan(): void {
    for (const root of this.roots()) {
      if (root === undefined) continue;
      for (const pid of withDescendants(root)) {
        const now = allowedCpus(pid);
        if (now !== undefined && now !== this.cpus && pinProcess(pid, this.cpus)) this.moved++;
      }
    }
  }
}
