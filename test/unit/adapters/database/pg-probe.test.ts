import { expect } from 'chai';
import { replicaTimeline } from '../../../../src/adapters/database/pg-probe.js';

describe("pg-probe: a replica's timeline", () => {
  it('is the highest of the WAL receiver, last restartpoint, minimum recovery point and newest WAL segment timelines (each can lag the replay timeline)', () => {
    // WAL receiver restarting (no row), restartpoint two timelines old, minimum recovery point already on the new one.
    expect(replicaTimeline({ received_tli: null, checkpoint_tli: 3, min_recovery_tli: 5, wal_file_tli: null })).to.equal(5);
    expect(replicaTimeline({ received_tli: 6, checkpoint_tli: 3, min_recovery_tli: 5, wal_file_tli: 6 })).to.equal(6);
    // The receiver stopped right after it wrote WAL of the new timeline: the segment's name still tells.
    expect(replicaTimeline({ received_tli: null, checkpoint_tli: 3, min_recovery_tli: 3, wal_file_tli: 4 })).to.equal(4);
    // 0 means "not set" in pg_control (a cleanly shut down primary's minimum recovery point).
    expect(replicaTimeline({ received_tli: 0, checkpoint_tli: 4, min_recovery_tli: 0, wal_file_tli: null })).to.equal(4);
    expect(replicaTimeline({ received_tli: null, checkpoint_tli: null, min_recovery_tli: null, wal_file_tli: null })).to.equal(null);
  });
});
