import { describe, expect, it } from 'vitest';
import { EV_TEXT, createEnvelope, visibleTo } from '@ag2net/protocol';

describe('visibleTo', () => {
  const env = createEnvelope({ channel_id: 'c1', sender_id: 'alice', event_type: EV_TEXT, audience: ['bob'] });

  it('shows an envelope to its sender even when the audience excludes it', () => {
    expect(visibleTo(env, 'alice')).toBe(true);
  });

  it('shows an envelope to audience members and hides it from everyone else', () => {
    expect(visibleTo(env, 'bob')).toBe(true);
    expect(visibleTo(env, 'carol')).toBe(false);
  });

  it('shows a broadcast (audience null) to everyone', () => {
    expect(visibleTo({ ...env, audience: null }, 'carol')).toBe(true);
  });
});
