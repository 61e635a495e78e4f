import { expect } from 'chai';
import { toSqlError } from '../../../src/adapters/sql/pg-errors.js';
import { urlWithDatabase } from '../../../src/adapters/sql/pg-connection.js';
import { SqlError } from '../../../src/domain/collectors/sql-error.js';

describe('pg adapter: errors and URLs', () => {
  const err = (code: string | undefined, message: string) => Object.assign(new Error(message), code ? { code } : {});

  it('maps statement timeouts and client read timeouts to sql_timeout', () => {
    expect(toSqlError(err('57014', 'canceling statement due to statement timeout'), false)).to.include({ code: 'sql_timeout', sqlState: '57014' });
    expect(toSqlError(err(undefined, 'Query read timeout'), false).code).to.equal('sql_timeout');
  });

  it('maps connection failures, shutdowns and broken connections to sql_unavailable', () => {
    expect(toSqlError(err('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:1'), false).code).to.equal('sql_unavailable');
    expect(toSqlError(err('57P01', 'terminating connection due to administrator command'), false).code).to.equal('sql_unavailable');
    expect(toSqlError(err('57P03', 'the database system is starting up'), false)).to.include({ code: 'sql_unavailable', sqlState: '57P03' });
    expect(toSqlError(err(undefined, 'Connection terminated unexpectedly'), false).code).to.equal('sql_unavailable');
    expect(toSqlError(err('42P01', 'relation does not exist'), true).code).to.equal('sql_unavailable');
  });

  it("keeps the server's DETAIL: a replica with hot_standby off says why it takes no queries", () => {
    const e = toSqlError(Object.assign(err('57P03', 'the database system is not accepting connections'), { detail: 'Hot standby mode is disabled.' }), true);
    expect(e).to.include({ code: 'sql_unavailable', message: 'the database system is not accepting connections (Hot standby mode is disabled)' });
  });

  it('maps statement errors to sql_failed with the SQLSTATE', () => {
    const e = toSqlError(err('42P01', 'relation "nope" does not exist'), false);
    expect(e).to.be.instanceOf(SqlError);
    expect(e).to.include({ code: 'sql_failed', sqlState: '42P01', message: 'relation "nope" does not exist' });
  });

  it('points a URL at another database, keeping credentials and parameters', () => {
    expect(urlWithDatabase('postgres://u:p%40ss@h:5433/postgres?sslmode=disable', 'app')).to.equal('postgres://u:p%40ss@h:5433/app?sslmode=disable');
    expect(urlWithDatabase('postgresql://h/postgres', 'my db')).to.equal('postgresql://h/my%20db');
  });
});
