import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from './config.js';

describe('bridge config', () => {
  it('reads flags over the environment and takes defaults', () => {
    const config = loadConfig(['--port', '9000', '--anonymous-read'], { AG2NET_PREFIX: 'p1', AG2NET_BRIDGE_PORT: '1' });
    expect(config).toMatchObject({ port: 9000, prefix: 'p1', anonymousRead: true, host: '127.0.0.1', pollMs: 500 });
  });

  it('reads the sign-in limits per name and address, 10 a minute and bursts of 20 by default', () => {
    expect(loadConfig([], {})).toMatchObject({ signInPerMinute: 10, signInBurst: 20 });
    const config = loadConfig(['--sign-in-per-minute', '3'], { AG2NET_BRIDGE_SIGN_IN_BURST: '5' });
    expect(config).toMatchObject({ signInPerMinute: 3, signInBurst: 5 });
    expect(() => loadConfig(['--sign-in-burst', '0'], {})).toThrow(ConfigError);
  });

  it('refuses an auth directory without a shared secret, and bad numbers', () => {
    expect(() => loadConfig(['--auth-dir', '/x'], {})).toThrow(/--auth-dir needs --secret/);
    expect(() => loadConfig(['--port', '1e3'], {})).toThrow(ConfigError);
    expect(() => loadConfig(['--nope'], {})).toThrow(ConfigError);
  });
});
