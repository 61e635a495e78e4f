import { WardenError } from '../../domain/errors.js';

/** A wardenctl failure: `code` is stable, `message` is the one line printed on stderr. */
export class CtlError extends WardenError {}

/** The user declined a confirmation (or stdin gave no answer). */
export class AbortedError extends CtlError {
  constructor(message = 'Aborted: nothing was changed') {
    super('aborted', message);
  }
}

/** A member's REST API could not be reached (refused, reset, timed out, TLS failure). */
export class RestUnreachableError extends CtlError {
  constructor(
    readonly url: string,
    reason: string,
  ) {
    super('api_unreachable', `${url}: ${reason}`);
  }
}
