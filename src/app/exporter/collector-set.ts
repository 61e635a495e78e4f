import type { CollectorDefinition } from '../../domain/collectors/collector.js';
import type { LoadedCollectors } from './config-files.js';

/** Loads the collector configuration from where the exporter was told to (throws ValidationError). */
export type CollectorLoader = () => Promise<LoadedCollectors>;

/** The active collector configuration; replaced as a whole by a successful reload only. */
export class CollectorSet {
  private loaded: LoadedCollectors;

  constructor(
    initial: LoadedCollectors,
    private readonly loader: CollectorLoader,
  ) {
    this.loaded = initial;
  }

  /** The definitions in run order. The array identity changes only on reload. */
  get collectors(): readonly CollectorDefinition[] {
    return this.loaded.collectors;
  }

  get source(): LoadedCollectors {
    return this.loaded;
  }

  /** Reads the configuration again without applying it; throws on any problem. */
  load(): Promise<LoadedCollectors> {
    return this.loader();
  }

  /** Makes a configuration read by `load` the active one. */
  apply(next: LoadedCollectors): void {
    this.loaded = next;
  }
}
