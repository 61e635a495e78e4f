import { STANDARD_OUTPUT, type CommandOutput } from './agent-args.js';
import { configWarnings } from './config-warnings.js';
import { effectiveConfigYaml, hostProblems, withHostProblems } from './local-config-checks.js';
import { loadLocalConfig, LocalConfigError, type LocalConfig } from './local-config.js';

/**
 * `warden --validate-config [--print]`: the file as the agent would read it (environment
 * overrides included), then this host (TLS files, PostgreSQL programs, directories).
 * Every problem is listed; exit 0 when there is none, 1 otherwise.
 */
export async function validateConfigCommand(configPath: string, print: boolean, env: Readonly<Record<string, string | undefined>>, output: CommandOutput = STANDARD_OUTPUT): Promise<number> {
  let config: LocalConfig;
  try {
    config = await loadLocalConfig(configPath, env);
  } catch (e) {
    if (!(e instanceof LocalConfigError)) throw e;
    output.err(`warden: ${(await withHostProblems(e)).message}\n`);
    return 1;
  }
  const problems = await hostProblems(config);
  if (print) output.out(effectiveConfigYaml(config));
  if (problems.length) {
    output.err(`warden: ${new LocalConfigError(configPath, problems).message}\n`);
    return 1;
  }
  for (const w of configWarnings(config, configPath)) output.err(`warden: warning: ${w}\n`);
  output.err(`warden: ${configPath} is valid\n`);
  return 0;
}
