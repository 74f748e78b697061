import { describe, expect, it } from 'vitest';
import { credsServerKey } from './creds-dir.js';

describe('credsServerKey', () => {
  it('names a server by its URL with nothing but letters, digits, _ and -', () => {
    expect(credsServerKey('nats://127.0.0.1:4222')).toBe('url_127_0_0_1_4222');
    expect(credsServerKey('nats://hub.example:4222,nats://hub-2.example:4222')).toBe(
      'url_hub_example_4222_nats_hub-2_example_4222',
    );
    expect(credsServerKey('tls://10.0.0.1')).toBe('url_tls_10_0_0_1');
  });
});
