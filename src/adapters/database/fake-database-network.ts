import type { FakeDatabase } from './fake-database.js';

/** One WAL record of the fake server. Records are shared by identity between servers that hold the same WAL. */
export interface WalRecord {
  /** Globally unique, increasing in creation order. */
  readonly id: number;
  /** Byte position just after the record. */
  readonly endLsn: number;
  readonly timeline: number;
  /** Clock time of creation (epoch ms). */
  readonly at: number;
  readonly kind: 'initdb' | 'write' | 'end_of_recovery';
}

/** A write a client was told had committed (the HA simulation checks none is ever lost). */
export interface AcknowledgedWrite {
  readonly id: number;
  readonly lsn: number;
  readonly timeline: number;
  /** Name of the server that acknowledged it. */
  readonly by: string;
}

/**
 * The "network" of fake servers: finds an upstream by conn_url, hands out record and
 * system identifiers, and records every acknowledged write.
 */
export class FakeDatabaseNetwork {
  private readonly nodes = new Map<string, FakeDatabase>();
  private recordSeq = 0;
  private systemSeq = 0;
  private readonly acked: AcknowledgedWrite[] = [];
  /** conn_urls of servers cut off from every other server. */
  private readonly cutOff = new Set<string>();

  /** Adds a server under its conn_url (done by the FakeDatabase constructor). */
  register(db: FakeDatabase): void {
    if (this.nodes.has(db.connUrl)) throw new Error(`a fake database already listens at ${db.connUrl}`);
    this.nodes.set(db.connUrl, db);
  }

  /** Removes a server (a deleted machine). */
  unregister(db: FakeDatabase): void {
    if (this.nodes.get(db.connUrl) === db) this.nodes.delete(db.connUrl);
  }

  /** The server at `connUrl`, if any. */
  get(connUrl: string): FakeDatabase | undefined {
    return this.nodes.get(connUrl);
  }

  /** Every registered server. */
  get all(): FakeDatabase[] {
    return [...this.nodes.values()];
  }

  /**
   * Cuts the server at `connUrl` off from every other server (true), or links it again
   * (false): no streamed WAL, base backup or rewind crosses the cut, as with a network
   * partition between database hosts; clients, its own agent and the WAL archive (archive
   * recovery) still reach it.
   */
  setCutOff(connUrl: string, cut: boolean): void {
    if (cut) this.cutOff.add(connUrl);
    else this.cutOff.delete(connUrl);
  }

  /** The server at `connUrl` is cut off from the others (setCutOff). */
  isCutOff(connUrl: string): boolean {
    return this.cutOff.has(connUrl);
  }

  /** `a` and `b` reach each other: the same server, or neither cut off. */
  linked(a: FakeDatabase, b: FakeDatabase): boolean {
    return a === b || (!this.cutOff.has(a.connUrl) && !this.cutOff.has(b.connUrl));
  }

  /** Running servers that accept writes: more than one is the split brain the HA loop must prevent. */
  writablePrimaries(): FakeDatabase[] {
    return this.all.filter((d) => d.isWritable);
  }

  /** Lets every running replica catch up with its upstream, cascades included. */
  replicate(): void {
    // Each pass moves WAL one hop down a cascade; n passes reach the end of any chain.
    for (let pass = 0; pass < Math.max(1, this.nodes.size); pass++) {
      let moved = false;
      for (const db of this.nodes.values()) if (db.pullFromUpstream()) moved = true;
      if (!moved) break;
    }
  }

  /** Every write acknowledged to a client so far, in order. */
  get acknowledgedWrites(): readonly AcknowledgedWrite[] {
    return this.acked;
  }

  /** Acknowledged writes that `db`'s WAL does not hold (lost if `db` is the primary). */
  lostAcknowledgedWrites(db: FakeDatabase): AcknowledgedWrite[] {
    return this.acked.filter((w) => !db.hasWrite(w.id));
  }

  /** @internal */
  nextRecordId(): number {
    return ++this.recordSeq;
  }

  /** @internal Deterministic, so a seeded simulation replays identically. */
  nextSystemIdentifier(): string {
    return String(7300000000000000000n + BigInt(++this.systemSeq) * 1000003n);
  }

  /** @internal */
  recordAcknowledged(w: AcknowledgedWrite): void {
    this.acked.push(w);
  }
}
