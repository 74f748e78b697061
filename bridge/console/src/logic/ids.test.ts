import { describe, expect, it } from 'vitest';
import { channelLabel, nameIds, shortId } from './ids.js';

describe('shortId', () => {
  it('keeps the random end of a ULID, so ids made in the same millisecond differ', () => {
    expect(shortId('01M85V15YQE7J11RV7G37G2PRH')).toBe('…7G2PRH');
    expect(shortId('01M85V15YQAAAAAAAAAAAAAAAA')).toBe('…AAAAAA');
    expect(shortId('short')).toBe('short');
  });
});

describe('channelLabel', () => {
  const base = { channel_id: '01M85V15YQE7J11RV7G37G2PRH', manifest: { type: 'discussion' } };
  it('names a channel by its intent', () => {
    expect(channelLabel({ ...base, labels: { intent: 'release review' } })).toBe('release review');
  });
  it('falls back to the type and the end of the id', () => {
    expect(channelLabel({ ...base, labels: {} })).toBe('discussion …7G2PRH');
    expect(channelLabel({ ...base, labels: { intent: '  ' } })).toBe('discussion …7G2PRH');
  });
});

describe('nameIds', () => {
  it('replaces the ids it knows and keeps the others', () => {
    const names = new Map([['01M85V15YQE7J11RV7G37G2PRH', 'slow']]);
    expect(
      nameIds(
        'not your turn: 01M85V15YQE7J11RV7G37G2PRH speaks next in 01M85V0XA57TKPE90N7B3A2397',
        (id) => names.get(id) ?? null,
      ),
    ).toBe('not your turn: slow speaks next in 01M85V0XA57TKPE90N7B3A2397');
  });
});
