import { afterEach, describe, expect, it, vi } from 'vitest';
import { Api } from './api.js';

interface Sent {
  readonly url: string;
  readonly authorization: string | null;
}

/** Every request the console's fetch makes while `run` runs; each is answered 500 with no body. */
async function sentBy(run: () => Promise<unknown>): Promise<Sent[]> {
  const sent: Sent[] = [];
  vi.stubGlobal('fetch', (url: string, init?: RequestInit) => {
    sent.push({ url, authorization: new Headers(init?.headers).get('authorization') });
    return Promise.resolve(new Response(null, { status: 500 }));
  });
  await run().catch(() => undefined);
  return sent;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the console API client', () => {
  const api = new Api('tok.en');
  const calls: Readonly<Record<string, () => Promise<unknown>>> = {
    me: () => api.me(),
    agents: () => api.agents({ kind: 'human' }),
    agent: () => api.agent('echo'),
    resume: () => api.resume('a1'),
    skill: () => api.skill('a1'),
    activity: () => api.activity(),
    channels: () => api.channels({ state: 'active' }),
    channel: () => api.channel('c1'),
    channelState: () => api.channelState('c1'),
    openChannel: () => api.openChannel({ type: 'conversation', target: ['echo'] }),
    closeChannel: () => api.closeChannel('c1'),
    post: () => api.post('c1', { text: 'hi' }),
    tasks: () => api.tasks(),
    audit: () => api.audit({ kinds: 'channel_closed' }),
    hubHealth: () => api.hubHealth(),
    hubStatus: () => api.hubStatus(),
    streamRefusal: () => api.streamRefusal('/v1/channels/c1/stream', { since: 1 }),
  };

  it('sends the token in the Authorization header on every fetch, never in the URL', async () => {
    const methods = Object.getOwnPropertyNames(Api.prototype).filter((m) => m !== 'constructor' && m !== 'streamUrl');
    expect(Object.keys(calls).sort()).toEqual(methods.sort());
    for (const [name, run] of Object.entries(calls)) {
      const sent = await sentBy(run);
      expect([name, sent.length, sent[0]?.authorization, sent[0]?.url.includes('access_token')]).toEqual([
        name,
        1,
        'Bearer tok.en',
        false,
      ]);
    }
    expect(await sentBy(() => api.streamRefusal('/v1/channels/c1/stream', { since: 1 }))).toEqual([
      { url: '/v1/channels/c1/stream?since=1', authorization: 'Bearer tok.en' },
    ]);
  });

  it('puts the token in the URL of an event stream only, for EventSource', () => {
    expect(api.streamUrl('/v1/channels/c1/stream', { since: 1 })).toBe(
      '/v1/channels/c1/stream?since=1&access_token=tok.en',
    );
    expect(api.streamUrl('/v1/me/stream')).toBe('/v1/me/stream?access_token=tok.en');
  });

  it('signs in with no token at all', async () => {
    const sent = await sentBy(() => Api.signIn('ann', 'k-ann'));
    expect(sent).toEqual([{ url: '/v1/session', authorization: null }]);
  });
});
