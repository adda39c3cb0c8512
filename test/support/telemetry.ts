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
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

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
  /** The metric points collected now, less what they were at the last `reset` (points that did not move are left out). */
  metricPoints(): Promise<MetricPoint[]>;
  /** Forgets recorded spans, and makes metric points count from now. */
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

  const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  // Exported on demand (forceFlush), never by the timer during a test.
  const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(meterProvider);

  // One SDK for the whole file, as one process has one: `reset` keeps a baseline instead of
  // replacing the provider (an observable counter stays registered, cumulative sums stay whole).
  let baseline = new Map<string, MetricPoint>();
  const collect = async (): Promise<MetricPoint[]> => {
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
  };
  const keyOf = (point: MetricPoint): string =>
    `${point.name} ${JSON.stringify(Object.entries(point.attributes).sort(([a], [b]) => a.localeCompare(b)))}`;

  return {
    spans: () => spanExporter.getFinishedSpans(),
    async metricPoints() {
      const moved: MetricPoint[] = [];
      for (const point of await collect()) {
        const before = baseline.get(keyOf(point));
        const value = point.value - (before?.value ?? 0);
        if (value === 0) continue;
        moved.push(
          point.sum === undefined ? { ...point, value } : { ...point, value, sum: point.sum - (before?.sum ?? 0) },
        );
      }
      return moved;
    },
    async reset() {
      spanExporter.reset();
      baseline = new Map((await collect()).map((point) => [keyOf(point), point]));
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
