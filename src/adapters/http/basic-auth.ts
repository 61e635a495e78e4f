import { createHash } from 'node:crypto';
import type { RequestAuthenticator } from './exporter-api.js';

/** A bcrypt hash of no password anyone knows: unknown users cost the same time as known ones. */
const DUMMY_HASH = '$2b$10$Ix04AqPrTju9JZQiTdL/3u6QqcXbqJEoZU1zx76hJTomCtAyLLpsS';
/** Verified credentials kept (bcrypt takes tens of milliseconds: checking every scrape would be a CPU sink). */
const CACHE_SIZE = 256;

/**
 * HTTP basic auth against bcrypt hashes (the exporter-toolkit's basic_auth_users), through
 * bcryptjs (plain JavaScript, no native build), loaded on the first check. Results are cached
 * by a SHA-256 of the header, and concurrent first checks of the same header share one bcrypt.
 */
export class BcryptBasicAuth implements RequestAuthenticator {
  private readonly results = new Map<string, boolean>();
  private readonly pending = new Map<string, Promise<boolean>>();

  constructor(private readonly users: Readonly<Record<string, string>>) {}

  async check(authorization: string | undefined): Promise<boolean> {
    if (!authorization || !/^basic /i.test(authorization)) return false;
    const key = createHash('sha256').update(authorization).digest('base64');
    const known = this.results.get(key);
    if (known !== undefined) return known;
    let p = this.pending.get(key);
    if (!p) {
      p = this.verify(authorization.slice(6).trim())
        .catch(() => false)
        .then((ok) => {
          if (this.results.size >= CACHE_SIZE) this.results.delete(this.results.keys().next().value!);
          this.results.set(key, ok);
          this.pending.delete(key);
          return ok;
        });
      this.pending.set(key, p);
    }
    return p;
  }

  private async verify(encoded: string): Promise<boolean> {
    const decoded = Buffer.from(encoded, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return false;
    const user = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    const hash = Object.hasOwn(this.users, user) ? this.users[user]! : undefined;
    const { default: bcrypt } = await import('bcryptjs');
    const ok = await bcrypt.compare(password, hash ?? DUMMY_HASH);
    return ok && hash !== undefined;
  }
}
