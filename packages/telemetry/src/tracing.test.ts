import { describe, expect, it } from 'vitest';
import { samplerFrom, tracingRequested } from './tracing.js';
import { watchConnection } from './connection-watch.js';

describe('tracingRequested', () => {
  it('is off when nothing asks for traces, and on for an OTLP endpoint or a named exporter', () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'console' })).toBe(true);
    expect(tracingRequested({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ' })).toBe(false);
  });

  it('is off when the SDK is disabled or the exporter is none, whatever the endpoint', () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(tracingRequested({ ...endpoint, OTEL_SDK_DISABLED: 'TRUE' })).toBe(false);
    expect(tracingRequested({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
  });
});

describe('samplerFrom', () => {
  it('reads OTEL_TRACES_SAMPLER and its ratio, defaulting to parent-based always-on', () => {
    expect(samplerFrom({}).toString()).toBe(
      'ParentBased{root=AlwaysOnSampler, remoteParentSampled=AlwaysOnSampler, remoteParentNotSampled=AlwaysOffSampler, localParentSampled=AlwaysOnSampler, localParentNotSampled=AlwaysOffSampler}',
    );
    expect(samplerFrom({ OTEL_TRACES_SAMPLER: 'always_off' }).toString()).toBe('AlwaysOffSampler');
    expect(samplerFrom({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).toString()).toBe(
      'TraceIdRatioBased{0.25}',
    );
    expect(samplerFrom({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '7' }).toString()).toBe(
      'TraceIdRatioBased{1}',
    );
  });
});

describe('watchConnection', () => {
  it('is not connected from a disconnect until the reconnect, nor once closed', async () => {
    const events: { type: string }[] = [];
    let wake: () => void = () => undefined;
    let closed = false;
    const nc = {
      isClosed: () => closed,
      async *status() {
        for (;;) {
          const next = events.shift();
          if (next !== undefined) yield next;
          else await new Promise<void>((resolve) => (wake = resolve));
        }
      },
    };
    const watch = watchConnection(nc);
    const push = async (type: string) => {
      events.push({ type });
      wake();
      // Let the watcher take the event.
      await new Promise((resolve) => setImmediate(resolve));
    };
    expect(watch.connected()).toBe(true);
    await push('disconnect');
    expect(watch.connected()).toBe(false);
    await push('reconnecting');
    expect(watch.connected()).toBe(false);
    await push('reconnect');
    expect(watch.connected()).toBe(true);
    closed = true;
    expect(watch.connected()).toBe(false);
  });
});
