import { describe, expect, it } from 'vitest';
import { parseMcpArgs } from './args.js';

describe('parseMcpArgs', () => {
  it('reads the flags, then the environment, with defaults', () => {
    expect(parseMcpArgs(['--creds', 'me.creds'], {})).toEqual({
      kind: 'run',
      args: { credsPath: 'me.creds', servers: ['nats://127.0.0.1:4222'], prefix: 'ag2', logLevel: 'warn' },
    });
    expect(
      parseMcpArgs(['--servers', 'nats://a:1,nats://b:2'], { AG2NET_CREDS: 'env.creds', AG2NET_PREFIX: 'p' }),
    ).toEqual({
      kind: 'run',
      args: { credsPath: 'env.creds', servers: ['nats://a:1', 'nats://b:2'], prefix: 'p', logLevel: 'warn' },
    });
  });

  it("takes a name alone (a hub without auth) or with the registrant's credentials and where to keep the identity's", () => {
    expect(parseMcpArgs(['--name', 'scout'], {})).toMatchObject({ kind: 'run', args: { name: 'scout' } });
    expect(
      parseMcpArgs(['--name', 'scout', '--creds', 'registrant.creds', '--creds-dir', 'ids'], { AG2NET_API_KEY: 'k' }),
    ).toEqual({
      kind: 'run',
      args: {
        credsPath: 'registrant.creds',
        name: 'scout',
        credsDir: 'ids',
        apiKey: 'k',
        servers: ['nats://127.0.0.1:4222'],
        prefix: 'ag2',
        logLevel: 'warn',
      },
    });
  });

  it('refuses a missing identity, an unknown flag and an unknown log level', () => {
    expect(parseMcpArgs([], {}).kind).toBe('error');
    expect(parseMcpArgs(['--creds', 'x', '--bogus'], {}).kind).toBe('error');
    expect(parseMcpArgs(['--creds', 'x', '--log-level', 'loud'], {}).kind).toBe('error');
    expect(parseMcpArgs(['--help'], {})).toEqual({ kind: 'help' });
  });
});
