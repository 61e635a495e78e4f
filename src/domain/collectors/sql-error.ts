import { WardenError } from '../errors.js';

/** Why a query failed: the server could not be reached, the deadline passed, or the statement failed. */
export type SqlErrorCode = 'sql_unavailable' | 'sql_timeout' | 'sql_failed';

/** A failed query; `sqlState` is PostgreSQL's SQLSTATE when the server answered. */
export class SqlError extends WardenError {
  constructor(
    code: SqlErrorCode,
    message: string,
    readonly sqlState?: string,
  ) {
    super(code, message);
  }
}
