import type { Logger } from '../../ports/logger.js';

/** A logger that drops every line (embedding and tests that assert nothing about logs). */
export class NullLogger implements Logger {
  debug(): void {}
  info(): void {}
  warn(): void {}
  error(): void {}
  child(): Logger {
    return this;
  }
}
