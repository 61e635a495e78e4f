import { expect } from 'chai';
import type { KeyValueStore } from '../../src/adapters/cluster-store/key-value.js';

/**
 * After `kv.progress()` answered at or past the write of `key`: the change was reported
 * before the answer when the store vouches for the order of its answers (etcd 3.4.31+,
 * 3.5.13+), and very soon after otherwise (older releases may answer ahead of it).
 */
export async function expectReportedByProgress(kv: KeyValueStore, seen: readonly string[], key: string): Promise<void> {
  const settled = () => kv.progressTrust().trusted || kv.progressTrust().why !== null;
  for (let i = 0; i < 1000 && !settled(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(settled(), 'the store tells whether its progress answers can be trusted').to.equal(true);
  if (kv.progressTrust().trusted) {
    expect(seen, 'the change reported before the progress answer').to.include(key);
    return;
  }
  for (let i = 0; i < 200 && !seen.includes(key); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(seen, 'the change reported soon after the progress answer').to.include(key);
}
