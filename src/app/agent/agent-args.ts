import { Command, CommanderError } from 'commander';
import { EXIT_INVALID_CONFIG } from './exit-codes.js';

export { EXIT_INVALID_CONFIG } from './exit-codes.js';

/** Where a command writes what it says: standard output and standard error by default. */
export interface CommandOutput {
  out(text: string): void;
  err(text: string): void;
}

/** process.stdout and process.stderr. */
export const STANDARD_OUTPUT: CommandOutput = { out: (s) => void process.stdout.write(s), err: (s) => void process.stderr.write(s) };

/** What the command line asks for. */
export interface AgentArgs {
  readonly configPath: string;
  /** `--validate-config`: check the file (and this host) and exit. */
  readonly validate: boolean;
  /** `--print`: with `--validate-config`, also print the effective configuration. */
  readonly print: boolean;
}

/** The config path from `warden -c node.yml` or `warden node.yml`; null after --help/--version. */
export function parseArgs(argv: readonly string[], version: string): string | null {
  return parseAgentArgs(argv, version)?.configPath ?? null;
}

/** The arguments of `warden [--validate-config [--print]] -c node.yml` (or `warden node.yml`); null after --help/--version. */
export function parseAgentArgs(argv: readonly string[], version: string, output: CommandOutput = STANDARD_OUTPUT): AgentArgs | null {
  const program = new Command('warden')
    .description('Warden agent: high availability for one PostgreSQL node')
    .version(`warden ${version}`, '-V, --version', 'print the version')
    .option('-c, --config <file>', 'local YAML configuration file')
    .option('--validate-config', 'check the configuration file and this host, list every problem, and exit (0: valid, 1: invalid)')
    .option('--print', 'with --validate-config: print the effective configuration (defaults and environment applied, passwords masked)')
    .argument('[config]', 'local YAML configuration file (same as -c)')
    .addHelpText(
      'after',
      `
Signals:
  SIGTERM, SIGINT  stop: PostgreSQL is stopped and the leader lock released; in
                   maintenance mode (wardenctl pause) PostgreSQL is left running,
                   a primary under the fencer's guard until the agent starts again
  SIGHUP           re-read the configuration file and reopen the log file`,
    )
    .exitOverride()
    .configureOutput({ writeOut: (s) => output.out(s), writeErr: (s) => output.err(s) });
  try {
    program.parse([...argv], { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError && (e.code === 'commander.helpDisplayed' || e.code === 'commander.version')) return null;
    throw e;
  }
  const opts = program.opts<{ config?: string; validateConfig?: boolean; print?: boolean }>();
  const path = (opts.config ?? program.args[0]) as string | undefined;
  if (!path) throw new CommanderError(EXIT_INVALID_CONFIG, 'warden.noConfig', 'a configuration file is required: warden -c node.yml');
  if (opts.print && !opts.validateConfig) throw new CommanderError(EXIT_INVALID_CONFIG, 'warden.noConfig', '--print goes with --validate-config');
  return { configPath: path, validate: !!opts.validateConfig, print: !!opts.print };
}
