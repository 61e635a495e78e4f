/**
 * How long an immediate shutdown (SIGQUIT) may take before the server's processes are killed:
 * it exits in milliseconds unless it cannot run (frozen, stuck on I/O). The agent's stops, the
 * fencer's and the fake server's use the same grace.
 */
export const IMMEDIATE_SHUTDOWN_GRACE_MS = 1_500;
