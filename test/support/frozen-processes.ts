/**
 * Processes stuck in the kernel, the way a hung disk or mount leaves them: the cgroup v1
 * freezer puts them in state D, and a SIGKILL sent to them stays pending (they can run
 * nothing more) until they are released, when they die at once.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { access, mkdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sleep } from '../../scripts/lib/processes.js';

const SYSTEM_ROOT = '/sys/fs/cgroup/freezer';

/**
 * Where the freezer hierarchy is mounted, or null when there is none. Inside `ip netns exec`
 * (the chaos runner's client namespace) /sys is a fresh mount without cgroups: the hierarchy is
 * mounted again in a temp folder of that private mount namespace (as root).
 */
async function freezerRoot(): Promise<string | null> {
  const present = (dir: string) => access(join(dir, 'cgroup.procs')).then(() => true, () => false);
  if (await present(SYSTEM_ROOT)) return SYSTEM_ROOT;
  const dir = mkdtempSync(join(tmpdir(), 'warden-freezer-'));
  const mounted = await new Promise<boolean>((resolve) => execFile('mount', ['-t', 'cgroup', '-o', 'freezer', 'freezer', dir], (e) => resolve(e === null)));
  if (mounted && (await present(dir))) return dir;
  await rmdir(dir).catch(() => undefined);
  return null;
}

let root: Promise<string | null> | null = null;

/** The cgroup v1 freezer can be used here (as root). */
export async function freezerAvailable(): Promise<boolean> {
  root ??= freezerRoot();
  return (await root) !== null;
}

/** A group of frozen processes in a cgroup of its own. */
export class FrozenProcesses {
  private constructor(
    private readonly dir: string,
    readonly pids: readonly number[],
  ) {}

  /** Moves `pids` into a new freezer cgroup `name` and freezes it (waits until the kernel says FROZEN). */
  static async freeze(name: string, pids: readonly number[]): Promise<FrozenProcesses> {
    const base = await (root ??= freezerRoot());
    if (base === null) throw new Error('no cgroup v1 freezer here');
    const dir = join(base, name);
    await mkdir(dir);
    const group = new FrozenProcesses(dir, pids);
    try {
      for (const pid of pids) await writeFile(join(dir, 'cgroup.procs'), String(pid)).catch(() => undefined);
      await writeFile(join(dir, 'freezer.state'), 'FROZEN');
      for (let i = 0; i < 200 && (await readFile(join(dir, 'freezer.state'), 'utf8')).trim() !== 'FROZEN'; i++) await sleep(10);
    } catch (e) {
      await group.release();
      throw e;
    }
    return group;
  }

  /** Every process of the group sits in state D (the freezer worked: a container may forbid it). */
  async allStuck(): Promise<boolean> {
    for (const pid of this.pids) {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
      if (stat.charAt(stat.lastIndexOf(')') + 2) !== 'D') return false;
    }
    return this.pids.length > 0;
  }

  /** The processes of the group that still exist and have a SIGKILL pending. */
  async killPending(): Promise<number[]> {
    const out: number[] = [];
    for (const pid of this.pids) {
      const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
      const pending = [...status.matchAll(/^(?:SigPnd|ShdPnd):\s*([0-9a-f]+)$/gm)].some((m) => (BigInt(`0x${m[1]}`) & 0x100n) !== 0n);
      if (pending) out.push(pid);
    }
    return out;
  }

  /** Thaws the group, moves what is left back to the root cgroup and removes the group. */
  async release(): Promise<void> {
    await writeFile(join(this.dir, 'freezer.state'), 'THAWED').catch(() => undefined);
    await sleep(200);
    const left = (await readFile(join(this.dir, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
    for (const pid of left) await writeFile(join(this.dir, '..', 'cgroup.procs'), pid).catch(() => undefined);
    await rmdir(this.dir).catch(() => undefined);
    // A hierarchy mounted for this run goes with the group.
    const base = join(this.dir, '..');
    if (base !== SYSTEM_ROOT) {
      root = null;
      await new Promise<void>((resolve) => execFile('umount', [base], () => resolve()));
      await rmdir(base).catch(() => undefined);
    }
  }
}
