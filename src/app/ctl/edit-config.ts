import { createTwoFilesPatch } from 'diff';
import YAML from 'yaml';
import { mergePatch, validateConfig, type RawConfig } from '../../domain/cluster/config/config.js';
import { CommandError } from '../../usecases/command-error.js';
import { readConfig, type StoredConfigView } from '../../usecases/read-config.js';
import { replaceConfig } from '../../usecases/replace-config.js';
import { confirmOrAbort } from './cluster-access.js';
import type { CtlContext } from './context.js';
import { parseYamlText } from '../yaml-read.js';
import { CtlError } from './errors.js';

/** Options of `edit-config`. */
export interface EditConfigOptions {
  /** `key.path=value` (value parsed as a YAML scalar; empty or `null` removes the key). */
  readonly set?: readonly string[];
  /** `name=value` of a server parameter (→ `db.parameters.name`). */
  readonly param?: readonly string[];
  /** A YAML/JSON fragment file merged in (`-` reads stdin). */
  readonly apply?: string;
  /** A YAML/JSON file holding the whole new configuration (`-` reads stdin); -s/-p/--apply then apply on top. */
  readonly replace?: string;
  /** No confirmation. */
  readonly force?: boolean;
  /** Do not print the diff. */
  readonly quiet?: boolean;
}

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The configuration as stored, with the revision to compare against on write (null: nothing stored yet). */
export function readStoredConfig(ctx: CtlContext): Promise<StoredConfigView> {
  return readConfig({ store: ctx.store });
}

/** Parses a command-line value as a YAML scalar (`30` → 30, `true` → true, `` → null). */
export function parseScalar(text: string): unknown {
  if (text.trim() === '') return null;
  // Bounded like a file (no alias bomb, no cycle); what does not read as YAML is the text itself.
  const parsed = parseYamlText(text);
  return parsed.issues.length ? text : parsed.value;
}

function splitAssignment(arg: string, flag: string): [string, string] {
  const i = arg.indexOf('=');
  if (i <= 0) throw new CtlError('invalid_assignment', `${flag} expects name=value; got ${JSON.stringify(arg)}`);
  return [arg.slice(0, i).trim(), arg.slice(i + 1)];
}

/** The merge-patch fragment of one `-s key.path=value`. */
export function setPatch(arg: string): Obj {
  const [path, value] = splitAssignment(arg, '-s/--set');
  const parts = path.split('.');
  if (parts.some((p) => p === '')) throw new CtlError('invalid_assignment', `-s/--set: bad key path ${JSON.stringify(path)}`);
  // Server parameter names hold dots themselves (auto_explain.log_min_duration).
  if (parts.length > 3 && parts[0] === 'db' && parts[1] === 'parameters') return paramPatch(`${parts.slice(2).join('.')}=${value}`);
  return parts.reduceRight<unknown>((inner, key) => ({ [key]: inner }), parseScalar(value)) as Obj;
}

/** The merge-patch fragment of one `-p name=value`. */
export function paramPatch(arg: string): Obj {
  const [name, value] = splitAssignment(arg, '-p/--param');
  return { db: { parameters: { [name]: parseScalar(value) } } };
}

/** Parses a YAML or JSON document that must be a mapping. */
function parseMapping(text: string, source: string): Obj {
  const parsed = parseYamlText(text);
  const first = parsed.issues[0];
  if (first) throw new CtlError('invalid_yaml', `${source}: not valid YAML/JSON (${first.line !== undefined ? `line ${first.line}, column ${first.col ?? 1}: ` : first.path ? `${first.path}: ` : ''}${first.message})`);
  const doc = parsed.value;
  if (doc === null || doc === undefined) return {};
  if (!isObject(doc)) throw new CtlError('invalid_yaml', `${source}: expected a mapping of configuration keys`);
  return doc;
}

/** The configuration as YAML text, for editing and diffs. */
export function configYaml(value: RawConfig): string {
  return Object.keys(value).length ? YAML.stringify(value) : '';
}

/** A unified diff of two YAML texts (without the `====` banner). */
export function unifiedDiff(before: string, after: string): string {
  return createTwoFilesPatch('before', 'after', before, after, '', '', { context: 3 })
    .split('\n')
    .filter((l, i) => !(i === 0 && /^=+$/.test(l)))
    .join('\n')
    .trimEnd();
}

/**
 * `edit-config`: change the dynamic configuration with `--replace`, `--apply`, `-s`, `-p`
 * (applied in that order), or in `$EDITOR`.
 * Shows the diff, validates like the API does, asks, then writes with a compare-and-set on
 * the revision it read, so a concurrent change is refused instead of overwritten.
 */
export async function editConfig(ctx: CtlContext, opts: EditConfigOptions = {}): Promise<void> {
  // The command line is checked before the DCS is asked: a malformed -s or -p is a usage error, at once.
  if (opts.apply === '-' && opts.replace === '-') throw new CtlError('invalid_assignment', '--apply and --replace cannot both read stdin');
  const sets = (opts.set ?? []).map(setPatch);
  const params = (opts.param ?? []).map(paramPatch);
  const { value: before, revision, unreadable } = await readStoredConfig(ctx);
  // Writing here would create a cluster: a mistyped name gets a stray one, and a cluster about
  // to bootstrap would keep this instead of its own bootstrap settings.
  if (revision === null) {
    throw new CtlError('config_not_stored', `cluster ${ctx.scope} has no configuration stored (no member has bootstrapped it yet, or the cluster name is wrong): nothing written`);
  }
  // The agents keep deciding on the configuration they last read: a change merged into the `{}` this reads as, or an
  // edit of it, would write the defaults in its place (synchronous mode, maintenance mode off).
  if (unreadable && !opts.replace) {
    throw new CtlError(
      'config_unreadable',
      `the configuration stored for cluster ${ctx.scope} cannot be read (not a JSON object; the agents keep deciding on the one they last read): replace it whole with --replace FILE; nothing written`,
    );
  }
  let after: RawConfig = before;
  const scripted = !!(opts.apply || opts.replace || opts.set?.length || opts.param?.length);
  if (scripted) {
    if (opts.replace) after = parseMapping(await ctx.readFile(opts.replace), opts.replace);
    if (opts.apply) after = mergePatch(after, parseMapping(await ctx.readFile(opts.apply), opts.apply));
    for (const s of sets) after = mergePatch(after, s);
    for (const p of params) after = mergePatch(after, p);
  } else {
    after = parseMapping(await ctx.edit(configYaml(before)), 'edited configuration');
  }
  const beforeText = configYaml(before);
  const afterText = configYaml(after);
  if (beforeText === afterText) {
    ctx.out('Not changed');
    return;
  }
  if (!opts.quiet) ctx.out(unifiedDiff(beforeText, afterText));
  const problems = validateConfig(after);
  if (problems.length) {
    throw new CtlError('config_invalid', `invalid configuration, nothing written: ${problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ')}`);
  }
  // Standard input is spent on the configuration: no answer could be read from it.
  if ((opts.apply === '-' || opts.replace === '-') && !opts.force) {
    throw new CtlError('force_needed', 'the changes were read from standard input, so no answer can be: give --force to apply them; nothing written');
  }
  await confirmOrAbort(ctx, opts.force, 'Apply these changes?');
  try {
    await replaceConfig({ store: ctx.store, agent: null }, { config: after, ifRevision: revision });
  } catch (e) {
    if (e instanceof CommandError && e.code === 'config_conflict') {
      throw new CtlError('concurrent_change', 'the configuration was changed by someone else since it was read; nothing was written (run edit-config again)');
    }
    throw e;
  }
  ctx.out('Configuration changed');
}
