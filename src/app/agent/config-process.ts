/**
 * The agent's configuration reader, run as a short-lived process of its own: it parses the
 * command line (commander), reads and validates the YAML file (yaml, ajv), runs
 * `--validate-config`, and writes its answer as one JSON document to file descriptor 3, then
 * exits. The long-running agent thus never loads those libraries, and none of the garbage of
 * parsing stays in its heap (docs/performance.md, "Agent memory").
 *
 *   config-process start <warden arguments...>   the arguments and the file the agent starts with
 *   config-process reload <path>                  the file read again (SIGHUP, POST /reload)
 *
 * The environment is the agent's: `WARDEN_*` overrides apply as in process. What a command
 * says (help, version, problems) travels in the answer, and the agent writes it.
 */
import { writeSync } from 'node:fs';
import { CommanderError } from 'commander';
import { EXIT_INVALID_CONFIG, parseAgentArgs, type CommandOutput } from './agent-args.js';
import { encodeAnswer, type AgentConfigAnswer } from './config-protocol.js';
import { loadLocalConfig, LocalConfigError } from './local-config.js';
import { svcVersion } from './package-version.js';
import { validateConfigCommand } from './validate-config.js';
import { withHostProblems } from './local-config-checks.js';

/** What a command said, kept for the answer: the agent writes it to its own stdout and stderr. */
function collected(): CommandOutput & { exit(code: number): AgentConfigAnswer } {
  let stdout = '';
  let stderr = '';
  return {
    out: (s) => void (stdout += s),
    err: (s) => void (stderr += s),
    exit: (code) => ({ kind: 'exit', code, stdout, stderr }),
  };
}

async function start(argv: readonly string[]): Promise<AgentConfigAnswer> {
  const output = collected();
  let args;
  try {
    args = parseAgentArgs(argv, svcVersion(), output);
  } catch (e) {
    if (e instanceof CommanderError) {
      // commander wrote its own usage errors; ours are written here.
      if (e.code === 'warden.noConfig') output.err(`warden: ${e.message}\n`);
      return output.exit(EXIT_INVALID_CONFIG);
    }
    throw e;
  }
  if (args === null) return output.exit(0);
  if (args.validate) return output.exit(await validateConfigCommand(args.configPath, args.print, process.env, output));
  try {
    return { kind: 'start', configPath: args.configPath, config: await loadLocalConfig(args.configPath, process.env) };
  } catch (e) {
    if (!(e instanceof LocalConfigError)) throw e;
    // The machine checks too, on what the file says: one attempt lists every problem.
    output.err(`warden: ${(await withHostProblems(e)).message}\n`);
    return output.exit(EXIT_INVALID_CONFIG);
  }
}

async function reload(path: string): Promise<AgentConfigAnswer> {
  try {
    return { kind: 'config', config: await loadLocalConfig(path, process.env) };
  } catch (e) {
    if (e instanceof LocalConfigError) return { kind: 'invalid', source: e.source, problems: e.problems };
    throw e;
  }
}

const [mode, ...rest] = process.argv.slice(2);
const answer = await (mode === 'start' ? start(rest) : mode === 'reload' ? reload(rest[0] ?? '') : Promise.reject(new Error(`unknown mode ${mode}`)));
writeSync(3, encodeAnswer(answer));
