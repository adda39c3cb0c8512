import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';
import type {
  Attributes,
  Counter,
  Histogram,
  Meter,
  MeterProvider,
  ProxyTracerProvider,
  Span,
  SpanOptions,
  Tracer,
  TracerProvider,
} from '@opentelemetry/api';

/**
 * `@opentelemetry/api` when the application installed it, else undefined (telemetry off).
 *
 * It is an optional peer dependency, so it is loaded with `require` inside a try rather than a
 * static import, which would fail to link without it. The API keeps its registered SDK on
 * `globalThis`, so this copy sees the SDK whichever way the application loaded the API.
 */
export const otel: typeof OtelApi | undefined = loadApi();

function loadApi(): typeof OtelApi | undefined {
  try {
    return createRequire(import.meta.url)('@opentelemetry/api') as typeof OtelApi;
  } catch {
    return undefined;
  }
}

/** A counter of calls and, optionally, a histogram of their durations (seconds). */
export interface OperationInstruments {
  readonly count: Counter;
  readonly duration?: Histogram;
}

/** Seconds, from 100 µs (an in-process store) to 10 s (a store timing out). */
export const DURATION_BUCKETS = [
  0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

const SPAN_OPTIONS: SpanOptions = { kind: 0 /* SpanKind.INTERNAL */ };

/** The API's no-op tracer provider: what its proxy provider delegates to while no SDK is registered. */
const NOOP_TRACER_PROVIDER: TracerProvider | undefined = otel && new otel.ProxyTracerProvider().getDelegate();

// The API's trace and metrics singletons, taken once: the package exports each through a getter,
// and every operation asks both for their providers.
const TRACE = otel?.trace;
const METRICS = otel?.metrics;

/**
 * One library's tracer and instruments.
 *
 * Nothing is taken once and for all, as an SDK is often started after this module was imported
 * (ES module imports run first) or replaced (tests): the tracer is taken again whenever the
 * provider behind the API's proxy changes, and the instruments whenever the global MeterProvider
 * does. With no SDK registered, a call costs two identity checks and makes no span at all, and
 * `begin` answers undefined so the caller adds nothing to its promise chain.
 */
export class LibraryTelemetry<I extends object> {
  private tracerProvider: TracerProvider | undefined;
  private tracer: Tracer | undefined;
  private provider: MeterProvider | undefined;
  private current: I | undefined;

  /**
   * @param scope the instrumentation scope (the package name)
   * @param subjectKey the attribute naming what an operation acts on (a key space, an aggregate), if any
   * @param operationKey the attribute naming the operation
   */
  constructor(
    private readonly scope: string,
    private readonly subjectKey: string | undefined,
    private readonly operationKey: string,
    private readonly makeInstruments: (meter: Meter) => I,
  ) {}

  /** The instruments on the registered MeterProvider; undefined when none is registered. */
  instruments(): I | undefined {
    if (otel === undefined || METRICS === undefined) return undefined;
    const provider = METRICS.getMeterProvider();
    if (provider !== this.provider) {
      this.provider = provider;
      const meter = provider.getMeter(this.scope);
      this.current = meter === otel.createNoopMeter() ? undefined : this.makeInstruments(meter);
    }
    return this.current;
  }

  /** A recording span, or undefined when no tracer provider records it. */
  startSpan(name: string): Span | undefined {
    if (TRACE === undefined) return undefined;
    const registered = TRACE.getTracerProvider();
    const provider =
      typeof (registered as Partial<ProxyTracerProvider>).getDelegate === 'function'
        ? (registered as ProxyTracerProvider).getDelegate()
        : registered;
    if (provider === NOOP_TRACER_PROVIDER) return undefined;
    if (provider !== this.tracerProvider) {
      this.tracerProvider = provider;
      this.tracer = provider.getTracer(this.scope);
    }
    const span = this.tracer!.startSpan(name, SPAN_OPTIONS);
    return span.isRecording() ? span : undefined;
  }

  /**
   * Starts one operation: a span named `spanName` and, when it ends, one count (and duration) on
   * `pick(instruments)`, all carrying the subject, the operation and the outcome. Undefined when
   * neither traces nor metrics are recorded (nothing was allocated for them).
   */
  begin(
    spanName: string,
    pick: (instruments: I) => OperationInstruments | undefined,
    operation: string,
    subject?: string,
  ): ActiveOperation | undefined {
    const instruments = this.instruments();
    const span = this.startSpan(spanName);
    if (span === undefined && instruments === undefined) return undefined;
    const attributes: Attributes = { [this.operationKey]: operation };
    if (this.subjectKey !== undefined && subject !== undefined) attributes[this.subjectKey] = subject;
    span?.setAttributes(attributes);
    return new ActiveOperation(span, instruments && pick(instruments), attributes);
  }
}

export const OUTCOME = 'ddd_kit.outcome';
export const ERROR_TYPE = 'error.type';

/** An operation begun by LibraryTelemetry.begin: ends once with an outcome. */
export class ActiveOperation {
  private readonly startedAt = performance.now();

  constructor(
    readonly span: Span | undefined,
    private readonly instruments: OperationInstruments | undefined,
    private readonly attributes: Attributes,
  ) {}

  /** Runs `fn` (on `thisArg`, with `args`) with this operation's span active, so spans started inside (a driver's) are its children. */
  within<A extends unknown[], T>(fn: (...args: A) => T, thisArg?: unknown, ...args: A): T {
    if (this.span === undefined || otel === undefined) return fn.apply(thisArg, args);
    return otel.context.with(otel.trace.setSpan(otel.context.active(), this.span), fn, thisArg, ...args);
  }

  /** Ends with `outcome`; with an error, also `error.type` and an error status. */
  end(outcome: string, error?: unknown): void {
    const attributes: Attributes = { ...this.attributes, [OUTCOME]: outcome };
    if (error !== undefined) attributes[ERROR_TYPE] = errorType(error);
    if (this.span !== undefined) {
      this.span.setAttributes(attributes);
      // No message: errors may quote keys and values (user data); error.type names the kind.
      if (error !== undefined) this.span.setStatus({ code: 2 /* SpanStatusCode.ERROR */ });
      this.span.end();
    }
    if (this.instruments !== undefined) {
      this.instruments.count.add(1, attributes);
      this.instruments.duration?.record((performance.now() - this.startedAt) / 1000, attributes);
    }
  }

  /** Ends when `promise` settles: `outcome(result)` on success, `failed(error)` (default 'error') on rejection. */
  settle<T>(
    promise: Promise<T>,
    outcome: (result: T) => string,
    failed: (error: unknown) => string = failedOutcome,
  ): Promise<T> {
    return promise.then(
      (result) => {
        this.end(outcome(result));
        return result;
      },
      (error: unknown) => {
        this.end(failed(error), error);
        throw error;
      },
    );
  }
}

const failedOutcome = (): string => 'error';

/** The error's class name (low cardinality, as `error.type` asks). */
export function errorType(error: unknown): string {
  if (error instanceof Error) return error.constructor.name || error.name;
  return '_OTHER';
}
