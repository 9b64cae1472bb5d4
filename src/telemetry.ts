/**
 * OpenTelemetry traces, on when OTEL_EXPORTER_OTLP_ENDPOINT is set (main.ts loads this module
 * only then, before the server's own modules: nothing of it is loaded otherwise). Spans go over
 * OTLP/HTTP (JSON) to `{OTEL_EXPORTER_OTLP_ENDPOINT}/v1/traces`; the SDK reads the standard
 * OTEL_* variables (service name, resource attributes, batching) itself.
 *
 * The http, pg and ioredis instrumentations patch those modules as they are imported, through
 * the module hook registered here; app.ts adds the Fastify plugin (@fastify/otel) that names each
 * request span after its route and carries the request id. Nothing secret reaches an attribute:
 * SQL statements go without their values, Redis commands without their arguments, and every URL
 * without its query string (authorization requests and callbacks carry codes and state there).
 */
import { register } from 'node:module';
import type { Attributes } from '@opentelemetry/api';
import type { ReadableSpan, SpanProcessor } from '@opentelemetry/sdk-trace-base';

/** Attributes that hold a URL or a part of one, under the old and the stable HTTP conventions. */
const URL_ATTRIBUTE = /(^|\.)(url|target|full|path)$|^http\.url$/;

/** A URL or path without its query string, fragment and any credentials. */
function withoutQuery(value: string): string {
  return value.replace(/[?#].*$/s, '').replace(/\/\/[^/@]*@/, '//');
}

/** Keeps URLs to their path before any exporter sees the span. */
function scrubbed(inner: SpanProcessor): SpanProcessor {
  return {
    onStart: (span, context) => inner.onStart(span, context),
    onEnd(span: ReadableSpan) {
      const attributes = span.attributes as Attributes;
      delete attributes['url.query'];
      for (const [key, value] of Object.entries(attributes)) {
        if (typeof value === 'string' && URL_ATTRIBUTE.test(key)) attributes[key] = withoutQuery(value);
      }
      inner.onEnd(span);
    },
    forceFlush: () => inner.forceFlush(),
    shutdown: () => inner.shutdown(),
  };
}

/** Starts tracing; the returned function flushes what is pending and stops it. */
export async function startTracing(): Promise<() => Promise<void>> {
  // The hook must be in place before pg, ioredis and http are first imported.
  const { createAddHookMessageChannel } = await import('import-in-the-middle');
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
  const [{ NodeSDK }, { BatchSpanProcessor }, { OTLPTraceExporter }, { HttpInstrumentation }, { PgInstrumentation }, { IORedisInstrumentation }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-pg'),
    import('@opentelemetry/instrumentation-ioredis'),
  ]);
  const sdk = new NodeSDK({
    serviceName: 'idp',
    spanProcessors: [scrubbed(new BatchSpanProcessor(new OTLPTraceExporter()))],
    // Traces only: the metrics are Prometheus's (/metrics), the logs pino's.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation(),
      // The statement's text, never its parameters (they hold hashes, subjects, secrets sealed or not).
      new PgInstrumentation({ enhancedDatabaseReporting: false }),
      // The command's name only: keys name sessions and codes.
      new IORedisInstrumentation({ dbStatementSerializer: (command) => command }),
    ],
  });
  sdk.start();
  await waitForAllMessagesAcknowledged();
  return () => sdk.shutdown();
}
