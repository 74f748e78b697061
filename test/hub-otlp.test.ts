import { HubClient } from '@ag2net/client';
import { traceAnchorOf } from '@ag2net/protocol/internal';
import { EV_TEXT } from '@ag2net/protocol';
import { uniqueName, waitFor } from '@ag2net/test-support';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileStack } from './support/file-stack.js';
import { startService } from './support/processes.js';

const stack = fileStack();

/** What an OTLP/HTTP JSON export holds, as far as the test reads it. */
interface Export {
  readonly resourceSpans?: readonly {
    readonly resource?: { readonly attributes?: readonly { key: string; value: { stringValue?: string } }[] };
    readonly scopeSpans?: readonly {
      readonly scope?: { readonly name?: string };
      readonly spans?: readonly { traceId: string; spanId: string; parentSpanId?: string; name: string }[];
    }[];
  }[];
}

/** A stand-in OpenTelemetry collector: keeps every span exported to it over OTLP/HTTP JSON. */
const received: { service: string; scope: string; traceId: string; parentSpanId: string; name: string }[] = [];
const collector = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    if (req.url === '/v1/traces') {
      const data = JSON.parse(body) as Export;
      for (const rs of data.resourceSpans ?? []) {
        const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
        for (const ss of rs.scopeSpans ?? []) {
          for (const span of ss.spans ?? []) {
            received.push({
              service,
              scope: ss.scope?.name ?? '',
              traceId: span.traceId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
            });
          }
        }
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{}');
  });
});
beforeAll(() => new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve)));
afterAll(() => new Promise<void>((resolve) => collector.close(() => resolve())));

describe('hub-service tracing', () => {
  it('exports its spans to the OTLP endpoint of OTEL_EXPORTER_OTLP_ENDPOINT, in the trace of the envelope', async () => {
    const prefix = uniqueName('otlp');
    const { port } = collector.address() as AddressInfo;
    const hub = stack.track(
      startService(
        'hub-otlp',
        'hub-service/src/main.ts',
        ['--nats-url', stack.url, '--prefix', prefix, '--hub-id', 'otlp-hub', '--lease-ttl-ms', '1500'],
        { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_SERVICE_NAME: 'hub-under-test' },
      ),
    );
    await waitFor(() => hub.output().includes('"msg":"active"'), { timeoutMs: 20_000, what: 'the hub active' });
    expect(hub.output()).toContain('"msg":"tracing on (OTEL_* settings)"');

    // This process installs no tracing: the SDK still stamps a trace id, and the hub traces under it.
    const client = await HubClient.connect({ servers: stack.url, prefix });
    let traceId = '';
    try {
      const a = await client.registerHuman({ name: 'a' });
      await client.registerHuman({ name: 'b' });
      const channel = await a.open({ type: 'conversation', target: 'b' });
      const ack = await a.sendEnvelope({
        channel_id: channel.channelId,
        event_type: EV_TEXT,
        event_data: { text: 'hi' },
      });
      traceId = (await a.readWal(channel.channelId)).find((e) => e.envelope_id === ack.envelope_id)?.trace_id ?? '';
    } finally {
      await client.close();
    }
    // SIGTERM flushes what the batch processor holds.
    expect(await hub.stop('SIGTERM')).toBe(0);

    const anchor = traceAnchorOf(traceId);
    expect(anchor?.traceId).toBe(traceId);
    const inTrace = received.filter((s) => s.traceId === traceId);
    expect(inTrace.map((s) => s.name).sort()).toEqual(['ag2net.admit', 'ag2net.deliver', 'ag2net.rpc post']);
    expect(new Set(inTrace.map((s) => `${s.service} ${s.scope}`))).toEqual(new Set(['hub-under-test @ag2net/hub']));
    // The RPC span and the delivery span hang under the trace's anchor; admission under the RPC span.
    const byName = (name: string) => inTrace.find((s) => s.name === name);
    expect([byName('ag2net.rpc post')?.parentSpanId, byName('ag2net.deliver')?.parentSpanId]).toEqual([
      anchor?.spanId,
      anchor?.spanId,
    ]);
  }, 60_000);
});
