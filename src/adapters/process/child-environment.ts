/**
 * The environment a child process gets (PostgreSQL and its tools, callbacks, custom methods):
 * the agent's own without its `WARDEN_*` variables, which may carry the API, superuser and
 * replication passwords (they configure the agent, nothing it starts), plus `extra`.
 */
export function childEnvironment(extra: Readonly<Record<string, string>> = {}, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (!k.startsWith('WARDEN_')) out[k] = v;
  return { ...out, ...extra };
}
