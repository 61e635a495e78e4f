import { constants } from 'node:fs';
import { access, open, readFile, type FileHandle } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Watchdog } from '../../ports/watchdog.js';
import { runCommand } from '../database/run-command.js';

/** Options of the Linux watchdog. */
export interface LinuxWatchdogOptions {
  /** Device path (default /dev/watchdog). */
  readonly device?: string;
  /** Where the kernel publishes watchdog attributes (default /sys/class/watchdog). */
  readonly sysfsRoot?: string;
  /** Bound of every call, ms (default 1000, the port's deadline). */
  readonly deadlineMs?: number;
  /** Sets the device's timeout; default util-linux `wdctl --settimeout <s> <device>`. True when it succeeded. */
  readonly setTimeout?: (device: string, seconds: number) => Promise<boolean>;
}

/** `wdctl --settimeout`: the WDIOC_SETTIMEOUT ioctl Node cannot issue itself. */
async function wdctlSetTimeout(device: string, seconds: number): Promise<boolean> {
  try {
    await runCommand('wdctl', ['--settimeout', String(seconds), device], { runAs: null, timeoutMs: 2000 });
    return true;
  } catch {
    return false;
  }
}

/** Settles with `p`, or with `fallback` after `ms` (an I/O call on a device must not hang the loop). */
function within<T>(ms: number, p: Promise<T>, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.catch(() => fallback),
    new Promise<T>((resolve) => {
      timer = setTimeout(() => resolve(fallback), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/**
 * The Linux kernel watchdog (`/dev/watchdog`, e.g. softdog or a hardware driver).
 *
 * Node cannot issue ioctl() without a native addon, so:
 * - the timeout is set with util-linux `wdctl --settimeout` (which issues WDIOC_SETTIMEOUT and
 *   closes the device with the magic character); when that fails (an old wdctl, a driver
 *   that refuses the value) the device keeps its own (e.g. `softdog soft_margin=N`). Either
 *   way it is read back from `/sys/class/watchdog/<dev>/timeout` and activate() refuses
 *   (returns false) when it is longer than the requested one, since the machine would then
 *   reset too late to protect the leader key. When sysfs does not tell, the device is trusted;
 * - a keepalive is a one-byte write, which every driver treats as a kick;
 * - disable writes the magic character 'V' before closing, which disarms drivers that
 *   support magic close unless the kernel was built or loaded with `nowayout`.
 */
export class LinuxWatchdog implements Watchdog {
  private readonly device: string;
  private readonly sysfsRoot: string;
  private readonly deadlineMs: number;
  private handle: FileHandle | null = null;
  private readonly setTimeout: (device: string, seconds: number) => Promise<boolean>;

  constructor(opts: LinuxWatchdogOptions = {}) {
    this.device = opts.device ?? '/dev/watchdog';
    this.sysfsRoot = opts.sysfsRoot ?? '/sys/class/watchdog';
    this.deadlineMs = opts.deadlineMs ?? 1000;
    this.setTimeout = opts.setTimeout ?? wdctlSetTimeout;
  }

  get isActive(): boolean {
    return this.handle !== null;
  }

  /** The device's timeout in seconds as sysfs reports it; null when unknown. */
  async effectiveTimeoutSeconds(): Promise<number | null> {
    // /dev/watchdog is the legacy alias of the first device, watchdog0.
    const name = basename(this.device) === 'watchdog' ? 'watchdog0' : basename(this.device);
    const text = await within(this.deadlineMs, readFile(join(this.sysfsRoot, name, 'timeout'), 'utf8'), null);
    const n = text === null ? NaN : Number(text.trim());
    return Number.isFinite(n) && n > 0 ? n : null;
  }

  async activate(timeoutSeconds: number): Promise<boolean> {
    if (this.handle) return true;
    if ((await this.effectiveTimeoutSeconds()) !== timeoutSeconds) await this.setTimeout(this.device, timeoutSeconds);
    const effective = await this.effectiveTimeoutSeconds();
    if (effective !== null && effective > timeoutSeconds) return false;
    // Opening the device arms it.
    // O_WRONLY without O_CREAT: a missing device must not turn into a new file.
    const opening = open(this.device, constants.O_WRONLY);
    const handle = await within(this.deadlineMs, opening, null);
    if (!handle) {
      // An open that completes after the deadline must not leave the device armed behind our back.
      void opening.then((late) => this.magicClose(late)).catch(() => {});
      return false;
    }
    this.handle = handle;
    return this.keepalive();
  }

  async keepalive(): Promise<boolean> {
    const handle = this.handle;
    if (!handle) return false;
    return within(
      this.deadlineMs,
      handle.write(Buffer.from([0])).then((r) => r.bytesWritten === 1),
      false,
    );
  }

  async disable(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    if (handle) await within(this.deadlineMs, this.magicClose(handle), undefined);
  }

  async isUsable(): Promise<boolean> {
    // Checked without opening: opening would arm the watchdog.
    return within(
      this.deadlineMs,
      access(this.device, constants.W_OK).then(() => true),
      false,
    );
  }

  private async magicClose(handle: FileHandle): Promise<void> {
    try {
      await handle.write('V');
    } finally {
      await handle.close();
    }
  }
}
