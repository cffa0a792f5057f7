/** Keeps finished spans in memory: what a test hands to `initTracing` to look at a trace. */
export { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
