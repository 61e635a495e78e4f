import YAML from 'yaml';
import { readConfig } from '../../usecases/read-config.js';
import type { CtlContext } from './context.js';
import { CtlError } from './errors.js';

/** Options of `show-config`. */
export interface ShowConfigOptions {
  /** yaml (default) | json */
  readonly format?: string;
}

/**
 * `show-config`: the dynamic configuration as stored in the DCS. Reads it with the same
 * command edit-config uses, without loading edit-config's validator and diff.
 */
export async function showConfig(ctx: CtlContext, opts: ShowConfigOptions = {}): Promise<void> {
  const format = opts.format ?? 'yaml';
  if (format !== 'yaml' && format !== 'json') throw new CtlError('invalid_format', `--format must be yaml or json; got ${format}`);
  const { value, unreadable } = await readConfig({ store: ctx.store });
  if (unreadable) ctx.warn('the stored configuration cannot be read (not a JSON object): the agents keep deciding on the one they last read; replace it with wardenctl edit-config --replace FILE');
  const yaml = Object.keys(value).length ? YAML.stringify(value) : '';
  ctx.out(format === 'json' ? JSON.stringify(value, null, 2) : yaml.trimEnd() || '{}');
}
