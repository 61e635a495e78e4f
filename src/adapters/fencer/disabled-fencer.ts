import type { Fencer, FencerStatus } from '../../ports/fencer.js';

/** The fencer when it is switched off (`fencer.enabled: false`), or where there is none (embedding): nothing is guarded. */
export class DisabledFencer implements Fencer {
  async attach(): Promise<boolean> {
    return false;
  }
  guard(): void {}
  unguard(): void {}
  async detach(): Promise<void> {}
  async handover(): Promise<boolean> {
    return false;
  }
  status(): FencerStatus {
    return { state: 'off', reason: null };
  }
}
