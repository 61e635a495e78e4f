/** initdb options the agent sets itself or that would break the layout (the WAL directory is the data directory's, which the agent empties and copies whole). */
const RESERVED = new Set(['D', 'pgdata', 'U', 'username', 'pwfile', 'W', 'pwprompt', 'X', 'waldir', 'no-instructions']);

/** What is wrong with one initdb option name; null when it may be given. */
function optionProblem(name: string): string | null {
  if (!/^[A-Za-z][A-Za-z0-9-]*$/.test(name)) return `invalid initdb option ${JSON.stringify(name)}`;
  if (RESERVED.has(name)) return `initdb option ${name} is set by the agent`;
  return null;
}

/** Every problem of bootstrap.initdb's option names, for the start-up check (a bootstrap would fail on them much later). */
export function initdbOptionProblems(options: readonly (string | Readonly<Record<string, string>>)[]): string[] {
  return options.flatMap((o) => (typeof o === 'string' ? [o] : Object.keys(o))).flatMap((name) => optionProblem(name) ?? []);
}

export function initdbArguments(options: readonly (string | Readonly<Record<string, string>>)[]): string[] {
  const args: string[] = [];
  const names = new Set<string>();
  const check = (name: string) => {
    const problem = optionProblem(name);
    if (problem) throw new Error(problem);
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
  // Checksums unless asked otherwise (PostgreSQL 18's --no-data-checksums).
  if (!names.has('data-checksums') && !names.has('k') && !names.has('no-data-checksums')) args.push('--data-checksums');
  return args;
}
