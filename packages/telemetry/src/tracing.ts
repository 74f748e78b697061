import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace';

/** Options of `startTracing`. */
export interface TracingOptions {
  /** `service.name` of the spans, unless `OTEL_SERVICE_NAME` names another. */
  readonly serviceName: string;
  /** Where the `OTEL_*` settings are read; default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * Export to this exporter, span by span, instead of what the environment configures (tests pass an
   * `InMemorySpanExporter`). Tracing is then on whatever the environment says.
   */
  readonly exporter?: SpanExporter;
}

/** Installed tracing: flushes and stops on `shutdown`. */
export interface Tracing {
  /** Exports what is buffered and uninstalls the provider. Idempotent. */
  shutdown(): Promise<void>;
}

/**
 * Whether the environment asks for traces: an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) or `OTEL_TRACES_EXPORTER` names `otlp` or `console`; and neither
 * `OTEL_SDK_DISABLED=true` nor `OTEL_TRACES_EXPORTER=none` turns it off.
 */
export function tracingRequested(env: NodeJS.ProcessEnv): boolean {
  if ((env['OTEL_SDK_DISABLED'] ?? '').trim().toLowerCase() === 'true') return false;
  const exporter = exporterName(env);
  if (exporter === 'none') return false;
  if (exporter === 'otlp' || exporter === 'console') return true;
  return nonEmpty(env['OTEL_EXPORTER_OTLP_ENDPOINT']) || nonEmpty(env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']);
}

/**
 * Installs the OpenTelemetry tracing SDK as the global tracer provider, configured by the standard `OTEL_*`
 * variables: `OTEL_TRACES_EXPORTER` (`otlp`, the default, or `console`), `OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`,
 * `_HEADERS`, `_TIMEOUT`, `_COMPRESSION` (read by the OTLP/HTTP exporter), `OTEL_SERVICE_NAME`,
 * `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` and `OTEL_TRACES_SAMPLER_ARG`. Returns null, installing
 * nothing, when `tracingRequested` is false and no exporter is given: the libraries' spans then cost nothing.
 */
export function startTracing(options: TracingOptions): Tracing | null {
  const env = options.env ?? process.env;
  if (options.exporter === undefined && !tracingRequested(env)) return null;
  const processor: SpanProcessor =
    options.exporter !== undefined
      ? new SimpleSpanProcessor({ exporter: options.exporter })
      : new BatchSpanProcessor({
          exporter: exporterName(env) === 'console' ? new ConsoleSpanExporter() : new OTLPTraceExporter(),
        });
  const resource = resourceFromAttributes({ 'service.name': options.serviceName }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new TracerProvider({ resource, sampler: samplerFrom(env), spanProcessors: [processor] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
  let stopping: Promise<void> | null = null;
  return {
    shutdown: () => {
      stopping ??= provider.shutdown().finally(() => {
        trace.disable();
        context.disable();
      });
      return stopping;
    },
  };
}

/** `OTEL_TRACES_SAMPLER` (default `parentbased_always_on`) with `OTEL_TRACES_SAMPLER_ARG` as the ratio. */
export function samplerFrom(env: NodeJS.ProcessEnv): Sampler {
  const name = (env['OTEL_TRACES_SAMPLER'] ?? 'parentbased_always_on').trim().toLowerCase();
  const arg = Number(env['OTEL_TRACES_SAMPLER_ARG'] ?? '1');
  const ratio = Number.isFinite(arg) && arg >= 0 && arg <= 1 ? arg : 1;
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

function exporterName(env: NodeJS.ProcessEnv): string {
  return (env['OTEL_TRACES_EXPORTER'] ?? '').split(',')[0]?.trim().toLowerCase() ?? '';
}

function nonEmpty(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== '';
}
