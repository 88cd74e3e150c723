import { Attributes, Context, context, propagation, ROOT_CONTEXT, Span, SpanKind, SpanStatusCode, trace, Tracer } from '@opentelemetry/api';
import type { BasicTracerProvider, SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Env } from './config';

export { SpanKind };

let installed: BasicTracerProvider | undefined;
let installing = false;

/**
 * Makes this process record spans through `processor`, propagate W3C `traceparent`, and keep the active
 * span across awaits. Until something installs it, every span below is OpenTelemetry's no-op and costs
 * next to nothing. Returns a function that flushes and stops it.
 */
export async function installTracing(processor: SpanProcessor, serviceName = 'crm'): Promise<() => Promise<void>> {
  if (installed || installing) throw new Error('tracing is already installed in this process');
  installing = true;
  // Memory: the tracing SDK (about 90 modules) is loaded only by a process that records spans.
  const [{ AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, { resourceFromAttributes }, { BasicTracerProvider }] = await Promise.all([
    import('@opentelemetry/context-async-hooks'),
    import('@opentelemetry/core'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
  ]).finally(() => (installing = false));
  const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': serviceName }), spanProcessors: [processor] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  installed = provider;
  return async () => {
    await provider.shutdown();
    trace.disable();
    propagation.disable();
    context.disable();
    installed = undefined;
  };
}

/**
 * Tracing for a process started from its entry point: on when an OTLP endpoint is configured
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, read by the exporter itself, as are
 * OTEL_EXPORTER_OTLP_HEADERS), off otherwise. OTEL_SERVICE_NAME overrides the name.
 */
export async function startTracing(service: string, env: Env): Promise<(() => Promise<void>) | undefined> {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return undefined;
  // Memory: the OTLP exporter (about 125 modules with the metrics SDK under it) only when tracing is on.
  const [{ OTLPTraceExporter }, { BatchSpanProcessor }] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/sdk-trace-base'),
  ]);
  return installTracing(new BatchSpanProcessor(new OTLPTraceExporter()), env.OTEL_SERVICE_NAME || `crm-${service}`);
}

export function tracerFor(component: string): Tracer {
  return trace.getTracer(`crm-${component}`);
}

/** The `traceparent` of a context (the active one by default), to carry in a header or a row. */
export function traceparentOf(ctx: Context = context.active()): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier.traceparent;
}

/** The context a `traceparent` names, or the root context when there is none. */
export function contextFrom(traceparent: string | null | undefined): Context {
  return traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
}

/** Runs `work` inside a new span (child of `parent`, the active context by default), recording a failure and ending it. */
export async function inSpan<T>(
  tracer: Tracer,
  name: string,
  options: { kind: SpanKind; parent?: Context; attributes?: Attributes },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const span = tracer.startSpan(name, { kind: options.kind, attributes: options.attributes }, options.parent ?? context.active());
  try {
    return await context.with(trace.setSpan(options.parent ?? context.active(), span), () => work(span));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error).message });
    throw err;
  } finally {
    span.end();
  }
}
