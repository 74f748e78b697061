/**
 * Revocation that sticks and credentials that retire, on a secured stack: `ag2net creds revoke --agent` cuts an
 * identity off at the hub and at NATS, its API key is refused at `attach` and `register` until `ag2net creds readmit`,
 * a person's console sessions end, and renewal hands out one JWT while it is fresh.
 */
import { HubClient, type AgentClient } from '@ag2net/client';
import { createIdentityKeys, registrantInboxPrefix } from '@ag2net/auth';
import { RpcReplySchema } from '@ag2net/protocol';
import { connectWithCreds, waitFor } from '@ag2net/test-support';
import type { NatsConnection } from '@nats-io/transport-node';
import { decode, type User } from '@nats-io/jwt';
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startSecuredStack, type SecuredStack } from '../../test/support/secured-stack.js';
import { call, openSse } from '../../test/support/bridge-http.js';
import { startStackBridge } from '../../test/support/stack-bridge.js';
import type { Bridge } from '@ag2net/bridge';
import { echo } from './conversation.js';
import { run } from './support.js';

const KEYS = {
  dave: 'k-dave-0123456789',
  erin: 'k-erin-0123456789',
  frank: 'k-frank-0123456789',
  gina: 'k-gina-0123456789',
};
let stack: SecuredStack;
let dir: string;
let registrant: HubClient;
let operator: HubClient;
let bridge: Bridge;

const auth = (name: keyof typeof KEYS) => ({ scheme: 'api_key', claim: { token: KEYS[name] } });
const operatorCli = (): string[] => [
  '--server',
  stack.url,
  '--prefix',
  stack.prefix,
  '--operator',
  '--creds',
  stack.paths.adminCreds,
];
const credsPath = (name: string): string => join(dir, `${name}.creds`);
const ErrorBody = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/** The wire error of a refused call, or `null` when it succeeded. */
async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string } | null> {
  try {
    await promise;
    return null;
  } catch (err) {
    return { code: String((err as { code?: unknown }).code), message: (err as Error).message };
  }
}

beforeAll(async () => {
  stack = await startSecuredStack({ apiKeys: KEYS });
  dir = await mkdtemp(join(tmpdir(), 'ag2net-revoke-'));
  registrant = await HubClient.connect({
    servers: stack.url,
    prefix: stack.prefix,
    creds: stack.paths.registrantCreds,
  });
  operator = await HubClient.connect({
    servers: stack.url,
    prefix: stack.prefix,
    creds: stack.paths.adminCreds,
    operator: true,
  });
  bridge = await startStackBridge(stack, { apiKeys: { erin: KEYS.erin, gina: KEYS.gina } });
});

afterAll(async () => {
  await bridge?.close();
  await registrant?.close({ graceMs: 0 });
  await operator?.close({ graceMs: 0 });
  await stack?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('ag2net creds revoke --agent and readmit', () => {
  let dave: AgentClient;

  it('cuts the identity off at once: NATS closes its connection and the hub refuses it', async () => {
    dave = await registrant.register(
      { name: 'dave', auth: auth('dave') },
      { credsPath: credsPath('dave'), handler: echo },
    );
    const closed = dave.hub.nc.closed();
    const r = await run([...operatorCli(), 'creds', 'revoke', '--agent', 'dave', '--dir', stack.authDir]);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toContain(`revoked dave (${dave.agentId})`);
    expect(r.out).toContain('the running server closed its connections');
    expect(String(await closed)).toBe('AuthorizationError: Authorization Violation');
    // The JWT it held is refused at NATS from now on.
    const held = await readFile(credsPath('dave'), 'utf8');
    await expect(connectWithCreds({ url: stack.url, creds: held })).rejects.toThrow(/Authorization Violation/i);
    const { records } = await operator.call('readAudit', { kinds: ['agent_revoked'] });
    const revoked = records;
    expect(revoked.map((a) => [a['agent_id'], a['name']])).toEqual([[dave.agentId, 'dave']]);
  });

  it('refuses its API key at attach and register exactly like a wrong key, until re-admitted', async () => {
    const publicKey = decode<User>((await readFile(credsPath('dave'), 'utf8')).split('\n')[1] ?? '').sub;
    const attach = refusal(
      registrant.call('attach', { name_or_id: 'dave', public_key: publicKey, auth: auth('dave') }),
    );
    expect(await attach).toEqual({ code: 'auth_failed', message: "admission refused for 'dave'" });
    const wrong = refusal(registrant.call('attach', { name_or_id: 'dave', public_key: publicKey, auth: auth('erin') }));
    expect(await wrong).toEqual({ code: 'auth_failed', message: "admission refused for 'dave'" });
    const register = refusal(
      registrant.call('register', { passport: { name: 'dave', auth: auth('dave') }, public_key: publicKey }),
    );
    expect(await register).toEqual({ code: 'auth_failed', message: "admission refused for 'dave'" });
    // The SDK's attach finds its persisted credentials refused and asks the hub: refused too.
    expect(
      (
        await refusal(
          registrant.attach('dave', { passport: { name: 'dave', auth: auth('dave') }, credsPath: credsPath('dave') }),
        )
      )?.code,
    ).toBe('auth_failed');
  });

  it('re-admitted by the operator, it attaches again with its key and gets credentials dated after the revocation', async () => {
    const r = await run([...operatorCli(), 'creds', 'readmit', '--agent', 'dave']);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toContain(`re-admitted dave (${dave.agentId})`);
    const revokedAt = (await operator.call('readAudit', { kinds: ['agent_revoked'] })).records[0]?.at ?? '';
    const back = await registrant.attach('dave', {
      passport: { name: 'dave', auth: auth('dave') },
      credsPath: credsPath('dave'),
      handler: echo,
    });
    try {
      expect(back.agentId).toBe(dave.agentId);
      const issued = decode<User>((await readFile(credsPath('dave'), 'utf8')).split('\n')[1] ?? '');
      expect(issued.iat).toBeGreaterThan(Math.floor(Date.parse(revokedAt) / 1000));
      await back.hub.call('setSkill', { skill_md: '# back' });
      expect(await operator.call('getSkill', { agent_id: dave.agentId })).toEqual({ skill_md: '# back' });
    } finally {
      await back.disconnect({ graceMs: 0 });
    }
  });
});

describe('a revocation at the hub only (--no-push)', () => {
  it('refuses every call of the connection still open, and after re-admission its JWT is retired', async () => {
    const frank = await registrant.register({ name: 'frank', auth: auth('frank') }, { credsPath: credsPath('frank') });
    try {
      const r = await run([
        ...operatorCli(),
        'creds',
        'revoke',
        '--agent',
        'frank',
        '--dir',
        stack.authDir,
        '--no-push',
      ]);
      expect(r.code).toBe(0);
      expect(frank.hub.nc.isClosed()).toBe(false);
      expect(await refusal(frank.hub.call('setSkill', { skill_md: 'x' }))).toEqual({
        code: 'access_denied',
        message: `unknown caller '${frank.agentId}'`,
      });
      await operator.call('readmitIdentity', { name_or_id: 'frank' });
      expect(await refusal(frank.hub.call('setSkill', { skill_md: 'x' }))).toEqual({
        code: 'auth_failed',
        message: 'these credentials were replaced by newer ones: connect with the newest credentials',
      });
    } finally {
      await frank.disconnect({ graceMs: 0 });
    }
  });
});

describe('credentials that retire', () => {
  it('hands out one JWT while it is fresh: 300 renewals in a row, one JWT', async () => {
    const dave = await registrant.attach('dave', {
      passport: { name: 'dave', auth: auth('dave') },
      credsPath: credsPath('dave'),
    });
    try {
      const jwts = new Set<string>();
      for (let i = 0; i < 300; i += 1) jwts.add((await dave.hub.call('renewCredentials', {})).credentials.jwt);
      expect(jwts.size).toBe(1);
      expect([...jwts][0]).toBe((await readFile(credsPath('dave'), 'utf8')).split('\n')[1]);
    } finally {
      await dave.disconnect({ graceMs: 0 });
    }
  });
});

describe("the console's sessions of a revoked person", () => {
  it('end: the next request is 401 and a live stream closes', async () => {
    const signIn = await call(bridge.url, '/v1/session', { body: { name: 'erin', api_key: KEYS.erin } });
    expect(signIn.status).toBe(200);
    const token = z.object({ token: z.string() }).parse(signIn.body).token;
    expect((await call(bridge.url, '/v1/me', { token })).status).toBe(200);
    const stream = await openSse(`${bridge.url}/v1/me/stream`, { authorization: `Bearer ${token}` });
    expect(stream.status).toBe(200);
    const r = await run([...operatorCli(), 'creds', 'revoke', '--agent', 'erin', '--dir', stack.authDir]);
    expect(r.code).toBe(0);
    expect(await stream.next(10_000)).toEqual({
      id: null,
      event: 'error',
      data: { error: { code: 'auth_failed', message: 'this session ended: the identity was revoked; sign in again' } },
    });
    await expect(stream.next(5_000)).rejects.toThrow(/stream ended/);
    await waitFor(async () => (await call(bridge.url, '/v1/me', { token })).status === 401, {
      what: "erin's session to end",
    });
    const again = await call(bridge.url, '/v1/channels', { token });
    expect(again.status).toBe(401);
    expect(ErrorBody.parse(again.body).error.code).toBe('auth_failed');
    // Signing in again is refused too while erin stays revoked: the hub does not admit her.
    const back = await call(bridge.url, '/v1/session', { body: { name: 'erin', api_key: KEYS.erin } });
    expect(back.status).toBe(401);
    stream.close();
  });

  it('end as well when the hub refuses the identity while NATS still serves its connection', async () => {
    // A revocation reaches the hub before NATS closes the connection; --no-push holds it there.
    const signIn = await call(bridge.url, '/v1/session', { body: { name: 'gina', api_key: KEYS.gina } });
    expect(signIn.status).toBe(200);
    const token = z.object({ token: z.string() }).parse(signIn.body).token;
    const stream = await openSse(`${bridge.url}/v1/me/stream`, { authorization: `Bearer ${token}` });
    expect(stream.status).toBe(200);
    const r = await run([...operatorCli(), 'creds', 'revoke', '--agent', 'gina', '--dir', stack.authDir, '--no-push']);
    expect(r.code).toBe(0);
    try {
      expect(await stream.next(10_000)).toEqual({
        id: null,
        event: 'error',
        data: {
          error: { code: 'auth_failed', message: 'this session ended: the identity was revoked; sign in again' },
        },
      });
      await expect(stream.next(5_000)).rejects.toThrow(/stream ended/);
      // Its connection here is closed: the next request attaches again, and the hub refuses that.
      const me = await call(bridge.url, '/v1/me/stream', { token });
      expect([me.status, ErrorBody.parse(me.body).error]).toEqual([
        401,
        { code: 'auth_failed', message: "admission refused for 'gina'" },
      ]);
    } finally {
      stream.close();
    }
  });
});

describe('registration budgets', () => {
  it('refuse a connection past its budget with a retryable unavailable, and leave other connections theirs', async () => {
    await using open = await startSecuredStack({
      openRegistration: true,
      hub: { registrationLimits: { perConnection: { per_minute: 60, burst: 3 } } },
    });
    const connection = async (): Promise<NatsConnection> =>
      connectWithCreds({
        url: open.url,
        creds: open.registrantCreds,
        inboxPrefix: registrantInboxPrefix(open.names),
      });
    const register = async (nc: NatsConnection, name: string): Promise<unknown> => {
      const body = JSON.stringify({ passport: { name }, public_key: createIdentityKeys().publicKey });
      const reply = RpcReplySchema.parse(
        (await nc.request(open.names.rpc('register'), body, { timeout: 5_000 })).json(),
      );
      return reply.ok ? 'registered' : reply.error;
    };
    const first = await connection();
    const second = await connection();
    try {
      const answers = [];
      for (let i = 0; i < 5; i += 1) answers.push(await register(first, `flood-${i}`));
      expect(answers.slice(0, 3)).toEqual(['registered', 'registered', 'registered']);
      for (const refused of answers.slice(3)) {
        const error = z
          .object({ code: z.string(), message: z.string(), details: z.object({ retry_after_ms: z.number() }) })
          .parse(refused);
        expect(error.code).toBe('unavailable');
        expect(error.message).toBe(
          `too many registrations from this connection or address: retry in ${error.details.retry_after_ms} ms`,
        );
        expect(error.details.retry_after_ms).toBeGreaterThan(0);
      }
      // Another connection has a budget of its own; the refused names were not registered.
      expect(await register(second, 'flood-3')).toBe('registered');
      await using admin = await HubClient.connect({ servers: open.url, prefix: open.prefix, creds: open.adminCreds });
      expect(await admin.findAgentId('flood-4')).toBeNull();
    } finally {
      await first.close();
      await second.close();
    }
  });
});
