import type { Problem } from '../../domain/errors.js';
import type { Logger } from '../../ports/logger.js';
import { describe } from './action-runner.js';
import type { AgentSettings, AgentSettingsSource } from './tokens.js';

/** The local settings in force; a reload re-reads the file and keeps the old settings when it is invalid. */
export class SettingsKeeper {
  private settings: AgentSettings;

  constructor(
    private readonly source: AgentSettingsSource,
    private readonly logger: Logger,
  ) {
    this.settings = source.current();
  }

  /** The settings in force. */
  get current(): AgentSettings {
    return this.settings;
  }

  /** Reads the file and lists its problems without applying it ([] when valid, or when the source has no file). Never throws. */
  async check(): Promise<readonly Problem[]> {
    try {
      return (await this.source.check?.()) ?? [];
    } catch (error) {
      return [{ path: '', message: describe(error) }];
    }
  }

  /** Re-reads the file; true when new settings apply. Never throws. */
  async reload(): Promise<boolean> {
    try {
      this.settings = await this.source.reload();
      const waiting = this.source.appliedAtNextStart?.() ?? [];
      if (waiting.length) this.logger.warn(`local configuration reloaded; these changes apply when the agent restarts: ${waiting.join(', ')}`);
      else this.logger.info('local configuration reloaded');
      return true;
    } catch (error) {
      this.logger.error('reload of the local configuration failed; keeping the previous one', { error: describe(error) });
      return false;
    }
  }
}
