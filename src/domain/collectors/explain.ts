import type { CollectorDefinition } from './collector.js';
import { formatDuration } from './duration.js';
import { versionRangeText, type CollectorStatus, type Plan } from './select.js';

/** What /explain shows: the configuration, the current plan (null before one exists) and runtime overrides. */
export interface ExplainInput {
  readonly collectors: readonly CollectorDefinition[];
  readonly plan: Plan | null;
  /** Why there is no plan (e.g. "database down"), shown for every collector when plan is null. */
  readonly unplannedReason: string;
  /** The name of a predicate that last returned false for this collector on every database, else null. */
  readonly failedPredicate?: (key: string) => string | null;
}

/** The Status attribute text of one collector. */
export function statusText(status: CollectorStatus): string {
  return status.active ? status.label : `Inactive (${status.reason})`;
}

/** One /explain block. */
export function explainBlock(def: CollectorDefinition, status: string): string {
  return [
    `Collector: ${def.key}`,
    `Query:     ${def.query.replace(/\s+/g, ' ').trim()}`,
    `Tags:      [${def.tags.join(', ')}]`,
    `TTL:       ${formatDuration(def.ttlMs)}`,
    `Timeout:   ${formatDuration(def.timeoutMs)}`,
    `Version:   ${versionRangeText(def)}`,
    `Status:    ${status}`,
  ].join('\n');
}

/** The /explain text: one block per configured collector, in run order, separated by blank lines. */
export function explainText(input: ExplainInput): string {
  const planned = new Map(input.plan?.collectors.map((c) => [c.def.key, c.status]) ?? []);
  const blocks = input.collectors.map((def) => {
    const status = planned.get(def.key);
    if (!status) return explainBlock(def, `Inactive (not planned: ${input.unplannedReason})`);
    const predicate = status.active ? input.failedPredicate?.(def.key) : null;
    return explainBlock(def, predicate ? `Inactive (predicate ${predicate} returned false)` : statusText(status));
  });
  return `${blocks.join('\n\n')}\n`;
}
