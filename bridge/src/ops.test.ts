import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { bridgeReadiness } from './ops.js';
import type { Bridge, BridgeState } from './server.js';

function bridgeIn(state: BridgeState): Bridge {
  const close = () => Promise.resolve();
  return { url: 'http://127.0.0.1:1', port: 1, state: () => state, close, [Symbol.asyncDispose]: close };
}

describe('bridge readiness', () => {
  it('is 503 with the reason while a NATS connection of the bridge is down, and ready once it is up', () => {
    expect(bridgeReadiness({ bridge: bridgeIn({ hubConnected: false, people: 2 }), stopping: false })).toEqual({
      ready: false,
      reason: 'NATS connection down; reconnecting',
    });
    expect(bridgeReadiness({ bridge: bridgeIn({ hubConnected: true, people: 2 }), stopping: false })).toEqual({
      ready: true,
      reason: 'serving; 2 person(s) signed in',
    });
    expect(bridgeReadiness({ bridge: bridgeIn({ hubConnected: true, people: 0 }), stopping: true })).toEqual({
      ready: false,
      reason: 'stopping',
    });
  });

  it('takes --ops-port from the flag or AG2NET_BRIDGE_OPS_PORT, and none by default', () => {
    expect(loadConfig([], {})).not.toHaveProperty('opsPort');
    expect(loadConfig(['--ops-port', '9464'], {})).toMatchObject({ opsPort: 9464 });
    expect(loadConfig([], { AG2NET_BRIDGE_OPS_PORT: '0' })).toMatchObject({ opsPort: 0 });
  });
});
