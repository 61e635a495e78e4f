import { expect } from 'chai';
import { serverLogExcerpt } from '../../../../src/adapters/database/server-log-excerpt.js';

describe('the server log excerpt of a failed start', () => {
  it('drops the lines of clients turned away, so the reason the server stopped stays in view (a full disk, seen on a real server)', () => {
    const turnedAway = Array.from({ length: 20 }, (_, i) => [
      `2026-12-02 12:14:25.0${i} UTC [135${i}] FATAL:  the database system is not yet accepting connections`,
      `2026-12-02 12:14:25.0${i} UTC [135${i}] DETAIL:  Consistent recovery state has not been yet reached.`,
      `2026-12-02 12:14:25.0${i} UTC [136${i}] FATAL:  the database system is starting up`,
    ]).flat();
    const log = [
      '2026-12-02 12:14:24.900 UTC [13486] LOG:  starting PostgreSQL 15.15 on x86_64-pc-linux-gnu',
      ...turnedAway.slice(0, 30),
      '2026-12-02 12:14:25.122 UTC [13490] LOG:  redo done at 0/7FFFE78 system usage: CPU: user: 0.13 s, system: 0.03 s, elapsed: 0.20 s',
      ...turnedAway.slice(30),
      '2026-12-02 12:14:25.131 UTC [13490] FATAL:  could not write to file "pg_wal/xlogtemp.13490": No space left on device',
      '2026-12-02 12:14:25.138 UTC [13486] LOG:  startup process (PID 13490) exited with exit code 1',
      '2026-12-02 12:14:25.139 UTC [13486] LOG:  shutting down due to startup process failure',
      '2026-12-02 12:14:25.162 UTC [13486] LOG:  database system is shut down',
      '',
    ].join('\n');
    const excerpt = serverLogExcerpt(log, 5);
    expect(excerpt).to.have.length(5);
    expect(excerpt[0]).to.include('redo done');
    expect(excerpt[1]).to.include('No space left on device');
    expect(excerpt.join('\n')).to.not.include('not yet accepting connections');
  });

  it('keeps the last lines as they are when no client was turned away', () => {
    expect(serverLogExcerpt('a\nb\nc\n', 2)).to.deep.equal(['b', 'c']);
    expect(serverLogExcerpt('', 5)).to.deep.equal([]);
  });
});
