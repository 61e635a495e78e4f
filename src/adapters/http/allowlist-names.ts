import { lookup } from 'node:dns/promises';
import type { Logger } from '../../ports/logger.js';
import { isAllowlistHostName } from './auth.js';

/** Every address a host name resolves to (IPv4 and IPv6). */
export type LookupAll = (name: string) => Promise<readonly string[]>;

const systemLookup: LookupAll = async (name) => (await lookup(name, { all: true, verbatim: true })).map((a) => a.address);

/** How often the names are resolved again while the agent runs (DNS changes without a restart). */
const DEFAULT_REFRESH_MS = 60_000;

/**
 * The addresses of the host names in `restapi.allowlist`, resolved before the API serves, after
 * each reload and every minute. A name that does not resolve keeps the addresses it last had;
 * one that never resolved allows nothing (the allowlist fails closed) and is logged once until
 * it resolves. `version` changes whenever an address does, so the access check is rebuilt.
 */
export class AllowlistNames {
  private names: readonly string[] = [];
  private addresses = new Map<string, readonly string[]>();
  private readonly failing = new Set<string>();
  private inFlight: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private changes = 0;

  constructor(
    private readonly logger: Logger,
    private readonly lookupAll: LookupAll = systemLookup,
    private readonly refreshMs = DEFAULT_REFRESH_MS,
  ) {}

  /** Changes whenever the names or their addresses change. */
  get version(): number {
    return this.changes;
  }

  /** The addresses `name` resolved to; none before it first resolved. */
  addressesOf(name: string): readonly string[] {
    return this.addresses.get(name) ?? [];
  }

  /** Takes the allowlist's entries (addresses and ranges are skipped) and resolves the names when they changed. */
  follow(entries: readonly string[]): Promise<void> {
    const names = [...new Set(entries.filter(isAllowlistHostName))];
    if (names.length === this.names.length && names.every((n, i) => n === this.names[i])) return this.inFlight ?? Promise.resolve();
    this.names = names;
    for (const gone of [...this.addresses.keys(), ...this.failing].filter((n) => !names.includes(n))) {
      this.addresses.delete(gone);
      this.failing.delete(gone);
    }
    this.changes++;
    return this.refresh();
  }

  /** Resolves every name again. Never throws. */
  refresh(): Promise<void> {
    const run = (this.inFlight ?? Promise.resolve()).then(() => this.resolveAll());
    this.inFlight = run.finally(() => {
      if (this.inFlight === run) this.inFlight = null;
    });
    return this.inFlight;
  }

  /** Resolves the names every minute until stop(). */
  start(): void {
    if (this.timer || this.refreshMs <= 0) return;
    this.timer = setInterval(() => void this.refresh(), this.refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async resolveAll(): Promise<void> {
    await Promise.all(this.names.map((name) => this.resolveOne(name)));
  }

  private async resolveOne(name: string): Promise<void> {
    let found: readonly string[];
    try {
      found = [...new Set(await this.lookupAll(name))].sort();
      if (found.length === 0) throw new Error('no address');
    } catch (e) {
      if (!this.failing.has(name)) {
        this.failing.add(name);
        const kept = this.addressesOf(name);
        this.logger.warn(`restapi.allowlist: the host name ${name} does not resolve: ${kept.length ? `its last addresses (${kept.join(', ')}) stay allowed` : 'it allows no address'} until it does`, {
          error: e instanceof Error ? e.message : String(e),
        });
      }
      return;
    }
    if (!this.names.includes(name)) return;
    if (this.failing.delete(name)) this.logger.info(`restapi.allowlist: the host name ${name} resolves again`);
    const before = this.addresses.get(name);
    if (before && before.length === found.length && before.every((a, i) => a === found[i])) return;
    this.addresses.set(name, found);
    this.changes++;
    this.logger.info(`restapi.allowlist: ${name} allows ${found.join(', ')}`);
  }
}
