/**
 * `warden/agent`: the agent's driver and its production wiring, for a host process of your
 * own. `HaLoop` runs the HA loop over any ports (see `warden/testing` for fakes);
 * `createAgentContainer` binds the production adapters from a local configuration, any of
 * them replaceable; `startAgent` is what the `warden` command runs.
 */
import 'reflect-metadata';

export { HaLoop } from './app/agent/ha-loop.js';
export { AgentSettingsSource, HaLoopOptions, fixedSettings, type AgentSettings } from './app/agent/tokens.js';
export { AgentTokens, createAgentContainer, type AgentAdapterOverrides, type AgentContainerOptions } from './app/agent/container.js';
export { loadLocalConfig, parseLocalConfig, LocalConfigError, type LocalConfig } from './app/agent/local-config.js';
export { startAgent, svcVersion, type RunningAgent } from './app/agent/main.js';
