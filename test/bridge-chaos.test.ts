import { startBridge, type Bridge } from '@ag2net/bridge';
import { HubClient, ackInvite } from '@ag2net/client';
import { EV_TEXT, EnvelopeSchema, type Envelope } from '@ag2net/protocol';
import { uniqueName } from '@ag2net/test-support';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call, openSse, type SseEvent, type SseStream } from './support/bridge-http.js';
import { fileStack } from './support/file-stack.js';
import { startHubService, startService, type ServiceProcess } from './support/processes.js';

/**
 * The bridge as its own process beside a hub-service process, with faults a browser's connection lives through:
 * the bridge frozen (SIGSTOP) while a client holds a channel stream, and the nats-server frozen under the bridge.
 * Whatever happened meanwhile, the stream continues from where it was with no gap and no duplicate, the process
 * stays up, and requests work again.
 */

/** How long each fault lasts: longer than a stream's poll and a browser's patience, shorter than one RPC attempt. */
const FAULT_MS = 5000;
/** The in-process replica's `hubTimeoutMs`: shorter than the stall, so its requests then answer 503. */
const REPLICA_HUB_TIMEOUT_MS = 1500;

const stack = fileStack();
const prefix = uniqueName('brchaos');
const secretText = randomBytes(32).toString('hex');
const KEYS = { alice: 'k-alice' };
let dir: string;
let hub: ServiceProcess;
let bridge: ServiceProcess;
let url: string;
let replica: Bridge;
let sdk: HubClient;
let token: string;
let channelId: string;

async function listeningUrl(service: ServiceProcess): Promise<string> {
  for (;;) {
    const m = /"url":"(http:\/\/[^"]+)"/.exec(service.output());
    if (m?.[1] !== undefined) return m[1];
    const done = await Promise.race([service.exited, sleep(100, 'wait')]);
    if (done !== 'wait') throw new Error(`${service.name} exited: ${service.output()}`);
  }
}

function envelopesOf(events: readonly SseEvent[]): Envelope[] {
  return events.filter((e) => e.event === 'envelope').map((e) => EnvelopeSchema.parse(e.data));
}

/** Reads events until one carries a text envelope saying `text`; returns them all. */
async function readUntil(stream: SseStream, text: string, timeoutMs = 30_000): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for (;;) {
    const event = await stream.next(timeoutMs);
    out.push(event);
    if (event.event === 'envelope' && EnvelopeSchema.parse(event.data).event_data['text'] === text) return out;
  }
}

async function post(base: string, text: string): Promise<number> {
  return (await call(base, `/v1/channels/${channelId}/envelopes`, { token, body: { text } })).status;
}

/** The whole log as alice reads it, through the bridge process. */
async function logIds(): Promise<{ ids: string[]; sequences: string[] }> {
  const reply = await call(url, `/v1/channels/${channelId}/log`, { token });
  const log = z.object({ envelopes: z.array(EnvelopeSchema) }).parse(reply.body);
  return {
    ids: log.envelopes.map((e) => e.envelope_id),
    sequences: log.envelopes.map((e) => String(e.sequence)),
  };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ag2net-bridge-chaos-'));
  await writeFile(join(dir, 'keys.json'), JSON.stringify(KEYS), { mode: 0o600 });
  await writeFile(join(dir, 'secret'), secretText, { mode: 0o600 });
  // A lease far longer than the faults: the hub stays the active one through them.
  hub = stack.track(startHubService({ natsUrl: stack.url, prefix, hubId: 'h1', leaseTtlMs: 20_000 }));
  sdk = await HubClient.connect({ servers: stack.url, prefix });
  await sdk.call('health', {});
  // echo answers every text; it lives as long as the SDK connection.
  await sdk.register(
    { name: 'echo' },
    {
      handler: async (envelope, client) => {
        if (envelope.event_type === 'ag2.channel.invite') return ackInvite(client, envelope);
        if (envelope.event_type !== EV_TEXT || envelope.sender_id === client.agentId) return;
        await client.send(envelope.channel_id, `echo: ${String(envelope.event_data['text'])}`);
      },
    },
  );
  const common = ['--server', stack.url, '--prefix', prefix, '--port', '0', '--poll-ms', '100'];
  bridge = stack.track(
    startService('bridge', 'bridge/src/main.ts', [
      ...common,
      '--api-keys',
      join(dir, 'keys.json'),
      '--secret',
      join(dir, 'secret'),
    ]),
  );
  url = await listeningUrl(bridge);
  // A second replica with the same secret and keys: alice's token works on both.
  replica = await startBridge({
    servers: stack.url,
    prefix,
    apiKeys: KEYS,
    secret: new TextEncoder().encode(secretText),
    port: 0,
    pollMs: 100,
    hubTimeoutMs: REPLICA_HUB_TIMEOUT_MS,
  });
  token = z
    .object({ token: z.string() })
    .parse((await call(url, '/v1/session', { body: { name: 'alice', api_key: KEYS.alice } })).body).token;
  const opened = await call(url, '/v1/channels', { token, body: { type: 'conversation', target: 'echo' } });
  channelId = z.object({ channel: z.object({ channel_id: z.string() }) }).parse(opened.body).channel.channel_id;
}, 60_000);

afterAll(async () => {
  await replica?.close();
  await sdk?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('chaos: the bridge process frozen while a browser holds a channel stream', () => {
  it(`after ${FAULT_MS} ms frozen the stream goes on with no gap and no duplicate, and new requests work`, async () => {
    const stream = await openSse(`${url}/v1/channels/${channelId}/stream?since=1`, {
      authorization: `Bearer ${token}`,
    });
    const seen: SseEvent[] = [];
    try {
      expect(await post(url, 'one')).toBe(201);
      seen.push(...(await readUntil(stream, 'echo: one')));
      bridge.pause();
      try {
        // Meanwhile the conversation goes on through the other replica.
        expect(await post(replica.url, 'two')).toBe(201);
        const watch = await openSse(`${replica.url}/v1/channels/${channelId}/stream`, {
          authorization: `Bearer ${token}`,
        });
        await readUntil(watch, 'echo: two').finally(() => watch.close());
        await sleep(FAULT_MS);
      } finally {
        bridge.resume();
      }
      seen.push(...(await readUntil(stream, 'echo: two')));
      expect(await post(url, 'three')).toBe(201);
      seen.push(...(await readUntil(stream, 'echo: three')));
    } finally {
      stream.close();
    }
    expect(bridge.child.exitCode).toBeNull();
    const log = await logIds();
    expect(envelopesOf(seen).map((e) => e.envelope_id)).toEqual(log.ids);
    expect(seen.filter((e) => e.event === 'envelope').map((e) => e.id)).toEqual(log.sequences);
  }, 60_000);
});

describe('chaos: the nats-server frozen under the bridge', () => {
  it(`requests made during a ${FAULT_MS} ms stall are answered once it ends, the process stays up, the stream resumes without gap`, async () => {
    const before = await logIds();
    const lastSeen = before.sequences.at(-1) ?? '0';
    const stream = await openSse(`${url}/v1/channels/${channelId}/stream`, {
      authorization: `Bearer ${token}`,
      'last-event-id': lastSeen,
    });
    const seen: SseEvent[] = [];
    let during: [Promise<number>, Promise<number>, Promise<number>];
    let bounded: Promise<unknown>;
    try {
      stack.nats.server.pause();
      try {
        during = [
          call(url, '/v1/agents', { token }).then((r) => r.status),
          call(url, '/v1/me', { token }).then((r) => r.status),
          post(url, 'four'),
        ];
        // The replica waits at most its hub timeout (shorter than the stall), then answers 503 unavailable.
        bounded = call(replica.url, '/v1/agents', { token }).then((r) => [r.status, codeOf(r.body)]);
        await sleep(FAULT_MS);
      } finally {
        stack.nats.server.resume();
      }
      expect(await bounded).toEqual([503, 'unavailable']);
      expect(await Promise.all(during)).toEqual([200, 200, 201]);
      expect((await call(replica.url, '/v1/agents', { token })).status).toBe(200);
      seen.push(...(await readUntil(stream, 'echo: four')));
      expect(await post(url, 'five')).toBe(201);
      seen.push(...(await readUntil(stream, 'echo: five')));
    } finally {
      stream.close();
    }
    expect([bridge.child.exitCode, hub.child.exitCode]).toEqual([null, null]);
    const after = await logIds();
    const fresh = after.ids.slice(before.ids.length);
    expect(envelopesOf(seen).map((e) => e.envelope_id)).toEqual(fresh);
    expect(seen.filter((e) => e.event === 'envelope').map((e) => e.id)).toEqual(
      after.sequences.slice(before.sequences.length),
    );
    expect(await call(url, '/healthz')).toEqual({ status: 200, body: { ok: true } });
  }, 60_000);
});

function codeOf(body: unknown): string {
  return z.object({ error: z.object({ code: z.string() }) }).parse(body).error.code;
}
