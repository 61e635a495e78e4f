import type { CtlContext } from './context.js';
import { configYaml, readStoredConfig } from './edit-config.js';
import { CtlError } from './errors.js';

/** Options of `show-config`. */
export interface ShowConfigOptions {
  /** yaml (default) | json */
  readonly format?: string;
}

/** `show-config`: the dynamic configuration as stored in the DCS. */
export async function showConfig(ctx: CtlContext, opts: ShowConfigOptions = {}): Promise<void> {
  const format = opts.format ?? 'yaml';
  if (format !== 'yaml' && format !== 'json') throw new CtlError('invalid_format', `--format must be yaml or json; got ${format}`);
  const { value } = await readStoredConfig(ctx);
  ctx.out(format === 'json' ? JSON.stringify(value, null, 2) : configYaml(value).trimEnd() || '{}');
}
