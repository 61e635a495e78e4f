import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DB_SHUTDOWNED, readControlFile, shutDownCleanly, stateName } from '../../../../src/adapters/database/pg-control-file.js';

const MINIMUMS = { max_connections: 100, max_worker_processes: 8, max_wal_senders: 10, max_prepared_transactions: 0, max_locks_per_transaction: 64 };

/** CRC-32C written out bit by bit (the test's own, independent of the reader's table). */
function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const b of bytes) {
    crc ^= b;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** A pg_control of `structSize` bytes of fields (the CRC follows them), padded to 8 KiB as PostgreSQL writes it. */
function controlFile(o: { version?: number; state?: number; lsn?: bigint; tli?: number; structSize?: number; corrupt?: boolean } = {}): Buffer {
  const size = o.structSize ?? 292;
  const buf = Buffer.alloc(8192);
  buf.writeBigUInt64LE(7712788954545598133n, 0);
  buf.writeUInt32LE(o.version ?? 1300, 8);
  buf.writeUInt32LE(202209061, 12);
  buf.writeUInt32LE(o.state ?? DB_SHUTDOWNED, 16);
  buf.writeBigInt64LE(1764237000n, 24);
  buf.writeBigUInt64LE(o.lsn ?? 0x4071980n, 32);
  buf.writeBigUInt64LE(o.lsn ?? 0x4071980n, 40);
  buf.writeUInt32LE(o.tli ?? 6, 48);
  for (let i = 56; i < size; i++) buf[i] = (i * 7) & 0xff;
  // MaxConnections and the four hot-standby settings after it (only where the struct reaches them).
  if (size >= 200) [100, 8, 10, 0, 64].forEach((v, i) => buf.writeInt32LE(v, 180 + i * 4));
  buf.writeUInt32LE(crc32c(buf.subarray(0, size)), size);
  if (o.corrupt) buf[40] ^= 0xff;
  return buf;
}

describe('readControlFile (global/pg_control without pg_controldata)', () => {
  let dir: string;
  const write = (b: Buffer) => writeFileSync(join(dir, 'global', 'pg_control'), b);
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warden-pgcontrol-'));
    mkdirSync(join(dir, 'global'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reads the system identifier, state, last checkpoint and its timeline, whatever the struct size of the version', async () => {
    for (const [version, structSize] of [[1100, 248], [1300, 292], [1700, 304], [1800, 312]] as const) {
      write(controlFile({ version, structSize }));
      // The hot-standby settings only for the layouts whose offsets were checked (13-18).
      const standbyMinimums = version === 1100 ? null : MINIMUMS;
      expect(await readControlFile(dir), `version ${version}`).to.deep.equal({ systemIdentifier: '7712788954545598133', version, state: 1, checkpointLsn: 0x4071980, timeline: 6, standbyMinimums });
    }
    write(controlFile({ state: 6, lsn: 0x1_0000_0028n, tli: 3 }));
    expect(await readControlFile(dir)).to.deep.include({ state: 6, checkpointLsn: 0x1_0000_0028, timeline: 3 });
  });

  it('is null for a checksum that does not match (a file caught mid-write), an unknown layout, a short or missing file', async () => {
    write(controlFile({ corrupt: true }));
    expect(await readControlFile(dir)).to.equal(null);
    write(controlFile({ version: 1002 }));
    expect(await readControlFile(dir)).to.equal(null);
    write(controlFile({ version: 1900 }));
    expect(await readControlFile(dir), 'a layout not checked yet').to.equal(null);
    write(controlFile().subarray(0, 40));
    expect(await readControlFile(dir)).to.equal(null);
    rmSync(join(dir, 'global', 'pg_control'));
    expect(await readControlFile(dir)).to.equal(null);
  });

  it('names the state as pg_controldata does and tells a clean shutdown, as a primary or in recovery', async () => {
    expect([0, 1, 2, 3, 4, 5, 6, 9].map(stateName)).to.deep.equal(['starting up', 'shut down', 'shut down in recovery', 'shutting down', 'in crash recovery', 'in archive recovery', 'in production', 'unrecognized status code']);
    for (const [state, clean] of [[1, true], [2, true], [4, false], [5, false], [6, false]] as const) {
      write(controlFile({ state }));
      expect(shutDownCleanly((await readControlFile(dir))!), `state ${state}`).to.equal(clean);
    }
  });
});
