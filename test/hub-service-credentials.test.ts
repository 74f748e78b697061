/**
 * hub-service with `--auth-dir` and `--api-keys`, as a process on a nats-server in operator mode: it connects as the
 * hub-service user, admits registrations by API key, and issues each identity a JWT for its own key that the identity
 * connects and calls with.
 */
import {
  AuthFile,
  authInit,
  createIdentityKeys,
  credsFile,
  registrantInboxPrefix,
  type AuthLayout,
} from '@ag2net/auth';
import { HubRpc } from '@ag2net/client';
import { NetworkError, hubNames } from '@ag2net/protocol';
import { connectWithCreds, startSecuredNatsServer, uniqueName, type NatsServer } from '@ag2net/test-support';
import { decode, type User } from '@nats-io/jwt';
import type { NatsConnection } from '@nats-io/transport-node';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHubService, type ServiceProcess } from './support/processes.js';

const prefix = uniqueName('svcauth');
let root: string;
let auth: AuthLayout;
let server: NatsServer;
let service: ServiceProcess;
let registrant: NatsConnection;
let rpc: HubRpc;
const opened: NatsConnection[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'ag2net-svc-auth-'));
  auth = await authInit({ dir: join(root, 'auth'), prefix, storeDir: join(root, 'jetstream') });
  server = await startSecuredNatsServer({ authDir: auth.dir });
  const keysFile = join(root, 'api-keys.json');
  await writeFile(keysFile, JSON.stringify({ alice: 'k-alice' }), { mode: 0o600 });
  service = startHubService({
    natsUrl: server.url,
    prefix,
    hubId: 'secured',
    extraArgs: ['--auth-dir', auth.dir, '--api-keys', keysFile, '--credentials-ttl', '600'],
  });
  registrant = await connectWithCreds({
    url: server.url,
    creds: await readFile(auth.path(AuthFile.registrantCreds), 'utf8'),
    inboxPrefix: registrantInboxPrefix(hubNames(prefix)),
  });
  opened.push(registrant);
  // Retried while the service starts: no responder yet is retried, not failed.
  rpc = new HubRpc(registrant, { prefix, retryForMs: 30_000 });
}, 60_000);

afterAll(async () => {
  for (const nc of opened) if (!nc.isClosed()) await nc.close();
  await service?.stop('SIGKILL');
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

describe('hub-service with --auth-dir and --api-keys', () => {
  it('issues a registered identity credentials for its own key, with the configured lifetime', async () => {
    expect((await rpc.call('health', {})).role).toBe('active');
    const keys = createIdentityKeys();
    const { passport, credentials } = await rpc.call('register', {
      passport: { name: 'alice', auth: { scheme: 'api_key', claim: { token: 'k-alice' } } },
      public_key: keys.publicKey,
    });
    if (credentials === null || passport.agent_id === null) throw new Error('no credentials issued');
    const id = passport.agent_id;
    const claims = decode<User>(credentials.jwt);
    expect(claims.sub).toBe(keys.publicKey);
    expect(claims.iss).toBe(auth.manifest.identity_account.signing_key);
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(600);
    const nc = await connectWithCreds({
      url: server.url,
      creds: credsFile(credentials.jwt, keys.seed),
      inboxPrefix: credentials.inbox_prefix,
    });
    opened.push(nc);
    const asAlice = new HubRpc(nc, { prefix, retryForMs: 5_000 });
    expect(
      (await asAlice.call('setResume', { resume: { summary: 'on her own key' } }, { caller: id })).resume,
    ).toMatchObject({
      summary: 'on her own key',
    });
  });

  it('refuses a registration whose API key does not match', async () => {
    const keys = createIdentityKeys();
    const refused = await rpc
      .call('register', {
        passport: { name: 'bob', auth: { scheme: 'api_key', claim: { token: 'k-alice' } } },
        public_key: keys.publicKey,
      })
      .then(
        () => null,
        (err: unknown) => (err instanceof NetworkError ? { code: err.code, message: err.message } : err),
      );
    expect(refused).toEqual({ code: 'auth_failed', message: "admission refused for 'bob'" });
  });
});
