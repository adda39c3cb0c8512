// An OpenTelemetry SDK with in-memory exporters, registered globally for one test file, so tests
// can read back the spans and metric points the libraries report through @opentelemetry/api.
import { context, metrics, trace, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type Histogram,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

/** One metric point, flattened: the instrument's name and unit, its attributes, and its value (a histogram's count). */
export interface MetricPoint {
  name: string;
  unit: string;
  attributes: Attributes;
  /** A sum's value, or a histogram's count. */
  value: number;
  /** A histogram's sum (seconds for durations). */
  sum?: number;
}

export interface TelemetryRecorder {
  /** Spans ended so far. */
  spans(): ReadableSpan[];
  /** The metric points collected now (cumulative since `start` or the last `reset`). */
  metricPoints(): Promise<MetricPoint[]>;
  /** Forgets recorded spans and starts counting metrics afresh. */
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Registers a tracer provider, a meter provider and an AsyncLocalStorage context manager as the
 * global ones (as `NodeSDK.start()` would), each exporting to memory.
 */
export async function startTelemetry(): Promise<TelemetryRecorder> {
  const spanExporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spanExporter)] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(tracerProvider);

  let metricExporter: InMemoryMetricExporter;
  let reader: PeriodicExportingMetricReader;
  let meterProvider: MeterProvider;
  const startMetrics = (): void => {
    metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    // Exported on demand (forceFlush), never by the timer during a test.
    reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
    meterProvider = new MeterProvider({ readers: [reader] });
    metrics.disable();
    metrics.setGlobalMeterProvider(meterProvider);
  };
  startMetrics();

  return {
    spans: () => spanExporter.getFinishedSpans(),
    async metricPoints() {
      metricExporter.reset();
      await reader.forceFlush();
      const points: MetricPoint[] = [];
      for (const resource of metricExporter.getMetrics()) {
        for (const scope of resource.scopeMetrics) {
          for (const metric of scope.metrics) {
            for (const point of metric.dataPoints as DataPoint<number | Histogram>[]) {
              const { name, unit } = metric.descriptor;
              if (metric.dataPointType === DataPointType.HISTOGRAM) {
                const histogram = point.value as Histogram;
                points.push({ name, unit, attributes: point.attributes, value: histogram.count, sum: histogram.sum });
              } else {
                points.push({ name, unit, attributes: point.attributes, value: point.value as number });
              }
            }
          }
        }
      }
      return points;
    },
    async reset() {
      spanExporter.reset();
      await meterProvider.shutdown();
      startMetrics();
    },
    async stop() {
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
      contextManager.disable();
      metrics.disable();
      trace.disable();
      context.disable();
    },
  };
}

/** The points of one metric whose attributes include `attributes`. */
export function pointsOf(points: MetricPoint[], name: string, attributes: Attributes = {}): MetricPoint[] {
  return points.filter((p) => p.name === name && Object.entries(attributes).every(([k, v]) => p.attributes[k] === v));
}

/** Spans as `name outcome` strings, in the order they ended (easy to compare in one assertion). */
export function spanSummary(spans: ReadableSpan[]): string[] {
  return spans.map((s) => `${s.name} ${String(s.attributes['ddd_kit.outcome'] ?? '')}`.trim());
}
