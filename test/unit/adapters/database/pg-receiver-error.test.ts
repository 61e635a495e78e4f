import { expect } from 'chai';
import { receiverErrorOf } from '../../../../src/adapters/database/pg-receiver-error.js';

describe('receiverErrorOf: why a WAL receiver does not stream, from a server log line', () => {
  it('tells a connection that fails from WAL that is gone, and ignores other lines', () => {
    const auth = '2026-11-28 14:01:02.003 UTC [123] FATAL:  could not connect to the primary server: connection to server at "127.0.0.1", port 25733 failed: FATAL:  password authentication failed for user "replicator"';
    expect(receiverErrorOf(auth)).to.deep.equal({
      cause: 'connection',
      message: 'could not connect to the primary server: connection to server at "127.0.0.1", port 25733 failed: FATAL:  password authentication failed for user "replicator"',
    });
    const gone = '2026-11-28 14:01:02.003 UTC [124] FATAL:  could not receive data from WAL stream: ERROR:  requested WAL segment 000000010000000000000003 has already been removed';
    expect(receiverErrorOf(gone)?.cause).to.equal('wal_removed');
    const slot = '2026-11-28 14:01:02.003 UTC [125] FATAL:  could not start WAL streaming: ERROR:  replication slot "node2" does not exist';
    expect(receiverErrorOf(slot)).to.deep.equal({ cause: 'other', message: 'could not start WAL streaming: ERROR:  replication slot "node2" does not exist' });
    expect(receiverErrorOf('2026-11-28 14:01:02.003 UTC [126] LOG:  started streaming WAL from primary at 0/3000000 on timeline 1')).to.equal(null);
    expect(receiverErrorOf('2026-11-28 14:01:02.003 UTC [127] FATAL:  the database system is starting up')).to.equal(null);
  });

  it('tells a pg_wal it cannot write to (a full disk, a read-only file system) apart: a new copy would not cure it', () => {
    const full = '2026-12-01 23:17:46.146 UTC [17373] FATAL:  could not write to file "pg_wal/xlogtemp.17373": No space left on device';
    expect(receiverErrorOf(full)).to.deep.equal({ cause: 'storage', message: 'could not write to file "pg_wal/xlogtemp.17373": No space left on device' });
    const ro = '2026-12-01 23:17:46.146 UTC [17374] FATAL:  could not create file "pg_wal/xlogtemp.17374": Read-only file system';
    expect(receiverErrorOf(ro)?.cause).to.equal('storage');
  });
});
