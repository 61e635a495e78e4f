/** initdb options the agent sets itself or that would break the layout. */
const RESERVED = new Set(['D', 'pgdata', 'U', 'username', 'pwfile', 'W', 'pwprompt', 'X', 'waldir', 'no-instructions']);

/**
 * Command-line arguments from bootstrap.initdb: `'data-checksums'` gives `--data-checksums`,
 * `{encoding: 'UTF8'}` gives `--encoding=UTF8` (single letters give `-k` / `-E UTF8`).
 * Data checksums are added unless given. Throws on an option name that is not an initdb flag.
 */
export function initdbArguments(options: readonly (string | Readonly<Record<string, string>>)[]): string[] {
  const args: string[] = [];
  const names = new Set<string>();
  const check = (name: string) => {
    if (!/^[A-Za-z][A-Za-z0-9-]*$/.test(name)) throw new Error(`invalid initdb option ${JSON.stringify(name)}`);
    if (RESERVED.has(name)) throw new Error(`initdb option ${name} is set by the agent`);
    names.add(name);
  };
  for (const opt of options) {
    if (typeof opt === 'string') {
      check(opt);
      args.push(opt.length === 1 ? `-${opt}` : `--${opt}`);
    } else {
      for (const [name, value] of Object.entries(opt)) {
        check(name);
        if (name.length === 1) args.push(`-${name}`, String(value));
        else args.push(`--${name}=${String(value)}`);
      }
    }
  }
  if (!names.has('data-checksums') && !names.has('k')) args.push('--data-checksums');
  return args;
}
