import { maxRevision } from './key-value.js';

/** What a store needs of one of its prefix watch streams to say whether, and how far, it watches. */
export interface PrefixWatchStream {
  readonly isLive: boolean;
  whenLive(ms: number): Promise<boolean>;
  progress(): Promise<string | null>;
}

/**
 * The open prefix watches of one store: the store is watching only while every one of them is
 * live, and has seen every change up to the lowest revision they all reported.
 */
export class PrefixWatchSet<W extends PrefixWatchStream> {
  private readonly watches = new Set<W>();

  add(w: W): void {
    this.watches.add(w);
  }

  /** False when `w` was already removed (an unsubscribe called twice). */
  delete(w: W): boolean {
    return this.watches.delete(w);
  }

  /** Removes every watch and hands them over to be stopped. */
  drain(): W[] {
    const all = [...this.watches];
    this.watches.clear();
    return all;
  }

  live(): boolean {
    return this.watches.size > 0 && [...this.watches].every((w) => w.isLive);
  }

  async whenLive(timeoutMs: number): Promise<boolean> {
    const watches = [...this.watches];
    if (watches.length === 0) return false;
    return (await Promise.all(watches.map((w) => w.whenLive(timeoutMs)))).every(Boolean);
  }

  /** The revision every watch has reported up to; null when there is none or one did not answer. */
  async progress(): Promise<string | null> {
    const watches = [...this.watches];
    if (watches.length === 0) return null;
    const revisions = await Promise.all(watches.map((w) => w.progress()));
    if (revisions.some((r) => r === null)) return null;
    return revisions.reduce<string>((low, r) => (maxRevision(low, r!) === low ? r! : low), revisions[0]!);
  }
}
