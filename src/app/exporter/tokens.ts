/** Inversify token of the parsed ExporterOptions. */
export const ExporterOptionsToken = Symbol.for('warden.exporter.Options');
/** Inversify token of the exporter's BuildInfo. */
export const BuildInfoToken = Symbol.for('warden.exporter.BuildInfo');
/** Inversify token of the initially loaded collector configuration. */
export const InitialCollectorsToken = Symbol.for('warden.exporter.InitialCollectors');
/** Inversify token of the function that (re)loads the collector configuration. */
export const CollectorLoaderToken = Symbol.for('warden.exporter.CollectorLoader');
/** Inversify token of the process-metrics text source. */
export const ProcessMetricsToken = Symbol.for('warden.exporter.ProcessMetrics');
