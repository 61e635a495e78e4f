import type { Action } from './decision.js';
import { watchdogTimeoutSeconds, type TickContext } from './tick-context.js';

/**
 * Watchdog actions of a leader that just refreshed its key: arm it when it is not armed
 * yet, otherwise kick it. Off or paused: make sure it is disarmed (a paused cluster does
 * nothing automatic, so a reset would only hurt). `required` makes a failure stop the
 * tick's sequence, which then demotes.
 */
export function leaderWatchdogActions(ctx: TickContext): Action[] {
  const mode = ctx.input.node.watchdogMode;
  const active = ctx.input.watchdog.active;
  if (mode === 'off' || ctx.paused) return active ? [{ type: 'disarmWatchdog' }] : [];
  const required = mode === 'required';
  if (active) return [{ type: 'kickWatchdog', required }];
  // automatic: a device known to be unusable is not tried every tick.
  if (!required && !ctx.input.watchdog.usable) return [];
  return [{ type: 'armWatchdog', timeoutSeconds: watchdogTimeoutSeconds(ctx), required }];
}

/** Watchdog actions before a promotion: armed first, so a hung agent cannot outlive its key. */
export function prePromoteWatchdogActions(ctx: TickContext): Action[] {
  const mode = ctx.input.node.watchdogMode;
  if (mode === 'off' || ctx.paused || (mode === 'automatic' && !ctx.input.watchdog.usable)) return [];
  return [{ type: 'armWatchdog', timeoutSeconds: watchdogTimeoutSeconds(ctx), required: mode === 'required' }];
}

/** Disarm when armed (after a demote, in pause, on a replica). */
export function disarmIfActive(ctx: TickContext): Action[] {
  return ctx.input.watchdog.active ? [{ type: 'disarmWatchdog' }] : [];
}
