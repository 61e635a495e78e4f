import { execFile } from 'node:child_process';

/** Runs a program with arguments and environment; resolves when it has exited. */
export type ProgramRunner = (file: string, args: readonly string[], env: NodeJS.ProcessEnv) => Promise<void>;

const runProgram: ProgramRunner = (file, args, env) =>
  new Promise((resolve, reject) => {
    execFile(file, [...args], { env, timeout: 5000 }, (err) => (err ? reject(err) : resolve()));
  });

/**
 * Tells systemd how the service is doing (`Type=notify`): ready, reloading, stopping, and a
 * status line for `systemctl status`. Node cannot send on the notification socket itself
 * (it is a Unix datagram socket, which Node's `net` and `dgram` do not open), so each message
 * goes through `systemd-notify`, which waits until systemd has taken it (the unit needs
 * `NotifyAccess=all`, as the message comes from that helper's PID). Messages are rare (start,
 * reload, stop), so a process each costs nothing that matters. Without `NOTIFY_SOCKET`
 * (not started by systemd) every call does nothing. Never throws.
 */
export class SystemdNotifier {
  private readonly socket: string | null;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    env: Readonly<Record<string, string | undefined>>,
    private readonly onError: (error: string) => void = () => undefined,
    private readonly run: ProgramRunner = runProgram,
    private readonly command = 'systemd-notify',
  ) {
    this.socket = env['NOTIFY_SOCKET'] || null;
  }

  /** Whether systemd asked for notifications. */
  get enabled(): boolean {
    return this.socket !== null;
  }

  /** Start-up (or a reload) is complete. */
  ready(status?: string): Promise<void> {
    return this.send(['READY=1', ...(status ? [`STATUS=${status}`] : [])]);
  }

  /** A reload begins; `ready()` ends it. */
  reloading(status?: string): Promise<void> {
    const usec = (process.hrtime.bigint() / 1000n).toString();
    return this.send(['RELOADING=1', `MONOTONIC_USEC=${usec}`, ...(status ? [`STATUS=${status}`] : [])]);
  }

  /** Shutdown begins. */
  stopping(status?: string): Promise<void> {
    return this.send(['STOPPING=1', ...(status ? [`STATUS=${status}`] : [])]);
  }

  /** A status line for `systemctl status`. */
  status(text: string): Promise<void> {
    return this.send([`STATUS=${text}`]);
  }

  /** Messages go out one after the other, in order. */
  private send(fields: readonly string[]): Promise<void> {
    if (this.socket === null) return Promise.resolve();
    const env = { NOTIFY_SOCKET: this.socket, PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
    this.queue = this.queue.then(() =>
      this.run(this.command, fields, env).catch((e: unknown) => this.onError(e instanceof Error ? e.message : String(e))),
    );
    return this.queue;
  }
}
