import { castGrpcError, EtcdLeaseInvalidError, type ILeaseKeepAliveResponse, type LeaseClient } from 'etcd3';

/** TTL of a lease granted by a leased write before any keepAlive (the default `ttl`). */
const DEFAULT_LEASE_TTL_SECONDS = 30;

/**
 * This agent's one etcd lease. It is renewed by single keepalives driven by the agent's
 * own tick (not the package's background loop, whose `lost` event comes after 2x TTL),
 * and replaced by a new grant when etcd no longer knows it or the TTL changes.
 */
export class Etcd3AgentLease {
  private id: string | null = null;
  private ttlSeconds = DEFAULT_LEASE_TTL_SECONDS;
  private granting: Promise<string> | null = null;

  constructor(
    private readonly leases: LeaseClient,
    private readonly streamTimeoutMs: () => number,
  ) {}

  /** Renews the lease; grants a new one and returns false when there is none, it expired, or the TTL changed. */
  async keepAlive(ttlSeconds: number): Promise<boolean> {
    const id = this.id;
    if (id !== null && ttlSeconds === this.ttlSeconds && (await this.renew(id))) return true;
    // A lease of another TTL is left to expire: keys on it move over on their next leased write.
    this.ttlSeconds = ttlSeconds;
    this.id = null;
    await this.current();
    return false;
  }

  /** The lease a leased write attaches to, granted with the last requested TTL when there is none. */
  current(): Promise<string> {
    if (this.id !== null) return Promise.resolve(this.id);
    this.granting ??= this.leases
      .leaseGrant({ TTL: this.ttlSeconds })
      .then((res) => {
        this.id = res.ID;
        return res.ID;
      })
      .finally(() => {
        this.granting = null;
      });
    return this.granting;
  }

  /** The lease's id, or null when there is none yet. */
  get currentId(): string | null {
    return this.id;
  }

  /** Drops `id` after etcd reported it unknown, so the next use grants a new lease. */
  forget(id: string): void {
    if (this.id === id) this.id = null;
  }

  /** Revokes the lease (its keys vanish at once); a lease etcd no longer knows counts as revoked. Returns etcd's revision after it, or null. */
  async revoke(): Promise<string | null> {
    const id = this.id;
    if (id === null) return null;
    let revision: string | null = null;
    try {
      revision = String((await this.leases.leaseRevoke({ ID: id })).header?.revision ?? '0');
    } catch (e) {
      if (!(e instanceof EtcdLeaseInvalidError)) throw e;
    }
    this.forget(id);
    return revision;
  }

  /** One keepalive on a short-lived stream; false when etcd answers that the lease is gone (TTL 0). */
  private async renew(id: string): Promise<boolean> {
    const stream = await this.leases.leaseKeepAlive({ deadline: Date.now() + this.streamTimeoutMs() });
    try {
      const res = await new Promise<ILeaseKeepAliveResponse>((resolve, reject) => {
        stream.on('data', resolve);
        stream.on('error', (e) => reject(castGrpcError(e)));
        stream.on('end', () => reject(new Error('lease keepalive stream ended without an answer')));
        stream.write({ ID: id });
      });
      return Number(res.TTL) > 0;
    } finally {
      // Half-close first so the package does not count our own cancel as a host failure.
      try {
        stream.end();
        stream.cancel();
      } catch {
        // already closed by an error or the deadline
      }
    }
  }
}
