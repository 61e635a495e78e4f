import type { CtlContext } from './context.js';
import { list, type ListOptions } from './list.js';

/** `topology`: the member table as a tree, each replica under the node it replicates from. */
export function topology(ctx: CtlContext, opts: ListOptions = {}): Promise<void> {
  return list(ctx, opts, true);
}
