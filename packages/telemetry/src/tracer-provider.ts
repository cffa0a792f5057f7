import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';

/** A registered tracer provider that sends spans to an OTLP endpoint and/or an exporter of the caller's. */
export function startTracerProvider(serviceName: string, options: { otlpEndpoint?: string; exporter?: SpanExporter }) {
  const spanProcessors = [];
  if (options.exporter) spanProcessors.push(new SimpleSpanProcessor(options.exporter));
  if (options.otlpEndpoint)
    spanProcessors.push(new BatchSpanProcessor(new OTLPTraceExporter({ url: `${options.otlpEndpoint.replace(/\/$/, '')}/v1/traces` })));
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    spanProcessors,
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  return provider;
}
