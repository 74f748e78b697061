/**
 * The hub roster and the delivery lag through the bridge and the SDK, on a secured stack with two hubs (active and
 * standby): the operator sees both with their roles and who holds the partition, a person is refused, and only the operator's NATS
 * user may ask the roster or read the delivery consumer.
 */
import { hubServiceInboxPrefix } from '@ag2net/auth';
import type { Bridge } from '@ag2net/bridge';
import { HubClient, type AgentClient } from '@ag2net/client';
import { AccessDeniedError, DeliveryLagSchema, HealthSchema, type Health } from '@ag2net/protocol';
import { connectWithCreds, waitFor } from '@ag2net/test-support';
import type { Hub } from '@ag2net/hub';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { call } from './support/bridge-http.js';
import { startSecuredStack, type SecuredStack } from './support/secured-stack.js';
import { startStackBridge } from './support/stack-bridge.js';

const KEYS = { alice: 'k-alice', dave: 'k-dave' } as const;
const OPERATOR_KEY = 'k-operator';
const STANDBY_ID = 'hub-standby';

const StatusReply = z.strictObject({
  partitions: z.number().nullable(),
  hubs: z.array(HealthSchema),
  holders: z.array(
    z.strictObject({
      partition: z.number(),
      held_by: z.array(z.strictObject({ hub_id: z.string(), epoch: z.number() })),
    }),
  ),
  unheld: z.array(z.number()),
  delivery: DeliveryLagSchema.nullable(),
});
const ErrorReply = z.object({ error: z.object({ code: z.string() }) });

let stack: SecuredStack;
let standby: Hub;
let bridge: Bridge;
let registrant: HubClient;
let admin: HubClient;
let dave: AgentClient;
/** A client on dave's own identity credentials. */
let asDave: HubClient;
let dir: string;
let token: { alice: string; operator: string };

async function signIn(name: string, key: string): Promise<string> {
  const reply = await call(bridge.url, '/v1/session', { body: { name, api_key: key } });
  expect(reply.status).toBe(200);
  return z.object({ token: z.string() }).parse(reply.body).token;
}

async function status(): Promise<z.output<typeof StatusReply>> {
  const reply = await call(bridge.url, '/v1/hub/status', { token: token.operator });
  expect(reply.status).toBe(200);
  return StatusReply.parse(reply.body);
}

const roles = (hubs: readonly Health[]) => hubs.map((h) => [h.hub_id, h.role, h.epoch]);

beforeAll(async () => {
  stack = await startSecuredStack({ apiKeys: KEYS });
  standby = await stack.startHub({ hubId: STANDBY_ID });
  bridge = await startStackBridge(stack, { apiKeys: { alice: KEYS.alice }, operatorKey: OPERATOR_KEY });
  registrant = await HubClient.connect({ servers: stack.url, prefix: stack.prefix, creds: stack.registrantCreds });
  admin = await HubClient.connect({
    servers: stack.url,
    prefix: stack.prefix,
    creds: stack.adminCreds,
    operator: true,
  });
  dir = await mkdtemp(join(tmpdir(), 'ag2net-hubs-'));
  const credsPath = join(dir, 'dave.creds');
  dave = await registrant.register(
    { name: 'dave', auth: { scheme: 'api_key', claim: { token: KEYS.dave } } },
    { credsPath },
  );
  asDave = await HubClient.connect({
    servers: stack.url,
    prefix: stack.prefix,
    creds: await readFile(credsPath, 'utf8'),
  });
  token = { alice: await signIn('alice', KEYS.alice), operator: await signIn('$operator', OPERATOR_KEY) };
  // The standby's roster subscription reaches the server a moment after it starts.
  await waitFor(async () => (await admin.hubs()).length === 2, { what: 'both hubs in the roster' });
}, 60_000);

afterAll(async () => {
  await asDave?.close();
  await dave?.disconnect({ graceMs: 0 });
  await registrant?.close();
  await admin?.close();
  await bridge?.close();
  await stack?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('GET /v1/hub/status', () => {
  it('lists the active hub and the standby, names the partition’s holder, and shows no lag at rest', async () => {
    const body = await status();
    expect(roles(body.hubs)).toEqual([
      [stack.hub.hubId, 'active', stack.hub.epoch],
      [STANDBY_ID, 'standby', 0],
    ]);
    expect(body.hubs.map((h) => h.held)).toEqual([[{ partition: 0, epoch: stack.hub.epoch }], []]);
    expect(body.partitions).toBe(1);
    expect(body.holders).toEqual([{ partition: 0, held_by: [{ hub_id: stack.hub.hubId, epoch: stack.hub.epoch }] }]);
    expect(body.unheld).toEqual([]);
    expect(body.delivery).toEqual({ pending: 0, ack_pending: 0, oldest_pending_age_seconds: null });
  });

  it('is refused to a person and to a caller without a token, and is in the OpenAPI document', async () => {
    const person = await call(bridge.url, '/v1/hub/status', { token: token.alice });
    expect([person.status, ErrorReply.parse(person.body).error.code]).toEqual([403, 'access_denied']);
    expect((await call(bridge.url, '/v1/hub/status')).status).toBe(401);
    const doc = z
      .object({ paths: z.record(z.string(), z.record(z.string(), z.unknown())) })
      .parse((await call(bridge.url, '/v1/openapi.json')).body);
    expect(Object.keys(doc.paths['/v1/hub/status'] ?? {})).toEqual(['get']);
  });
});

describe('who may ask the roster and read the delivery lag', () => {
  it('the operator may; an identity and the registrant get AccessDeniedError', async () => {
    expect(roles(await admin.hubs())).toEqual([
      [stack.hub.hubId, 'active', stack.hub.epoch],
      [STANDBY_ID, 'standby', 0],
    ]);
    expect(await admin.deliveryLag()).toEqual({ pending: 0, ack_pending: 0, oldest_pending_age_seconds: null });
    for (const client of [asDave, registrant]) {
      await expect(client.hubs()).rejects.toBeInstanceOf(AccessDeniedError);
      await expect(client.deliveryLag()).rejects.toBeInstanceOf(AccessDeniedError);
    }
  });

  it('the hub-service user may answer the roster but not ask it', async () => {
    const nc = await connectWithCreds({
      url: stack.url,
      creds: stack.hubServiceCreds,
      inboxPrefix: hubServiceInboxPrefix(stack.names),
    });
    try {
      const asked = nc.request(stack.names.hubsPing, '{}', { timeout: 2000 });
      await expect(asked).rejects.toThrow(`Permissions Violation for Publish to "${stack.names.hubsPing}"`);
    } finally {
      await nc.close();
    }
  });
});

describe('the hub status while no hub runs', () => {
  it('lists no hub, the partition without a holder and no delivery lag: the lag is a holding hub’s to measure', async () => {
    await standby.close();
    await stack.hub.close();
    const body = await status();
    // The count is the one the bridge learnt while the hubs answered.
    expect(body).toEqual({
      partitions: 1,
      hubs: [],
      holders: [{ partition: 0, held_by: [] }],
      unheld: [0],
      delivery: null,
    });
  });
});
