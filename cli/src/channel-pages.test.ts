import type { HubClient } from '@ag2net/client';
import { ChannelMetadataSchema, type ChannelMetadata } from '@ag2net/protocol';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { listChannelPages } from './channel-pages.js';

/** A channel as `listChannels` answers it (the protocol's fixture), with id `id` and manifest type `type`. */
const FIXTURE = ChannelMetadataSchema.parse(
  JSON.parse(
    readFileSync(
      new URL(
        '../../packages/protocol/test/fixtures/ChannelMetadata/active-consulting-as-ag2-writes.json',
        import.meta.url,
      ),
      'utf8',
    ),
  ),
);
function channel(id: string, type = 'conversation'): ChannelMetadata {
  return { ...FIXTURE, channel_id: id, manifest: { ...FIXTURE.manifest, type } };
}

/** A hub of `pages[k]` per partition k, each a list of pages; records every call's partition and cursor. */
function fakeHub(pages: readonly (readonly ChannelMetadata[][])[]) {
  const calls: [number | undefined, string | null][] = [];
  const hub: Pick<HubClient, 'call' | 'partitions'> = {
    partitions: () => Promise.resolve(pages.length),
    call: ((op: string, request: { cursor?: string | null }, options: { partition?: number }) => {
      expect(op).toBe('listChannels');
      calls.push([options.partition, request.cursor ?? null]);
      const list = pages[options.partition ?? 0] ?? [];
      const at = request.cursor === null || request.cursor === undefined ? 0 : Number(request.cursor);
      return Promise.resolve({
        channels: list[at] ?? [],
        next_cursor: at + 1 < list.length ? String(at + 1) : null,
      });
    }) as HubClient['call'],
  };
  return { hub, calls };
}

describe('listChannelPages', () => {
  it('reads every page of the one partition', async () => {
    const { hub, calls } = fakeHub([[[channel('c1'), channel('c2')], [channel('c3')]]]);
    const found = await listChannelPages(hub, { agent_id: null, state: null }, { caller: '$operator' });
    expect(found.map((c) => c.channel_id)).toEqual(['c1', 'c2', 'c3']);
    expect(calls).toEqual([
      [0, null],
      [0, '1'],
    ]);
  });

  it('walks the partitions from 0 on, each page by page, and stops once enough were kept', async () => {
    const { hub, calls } = fakeHub([
      [[channel('a1', 'workflow')], [channel('a2')]],
      [[channel('b1'), channel('b2', 'workflow')]],
      [[channel('c1', 'workflow')]],
    ]);
    const all = await listChannelPages(hub, { agent_id: null, state: null }, { caller: '$operator' });
    expect(all.map((c) => c.channel_id)).toEqual(['a1', 'a2', 'b1', 'b2', 'c1']);
    calls.length = 0;
    const two = await listChannelPages(
      hub,
      { agent_id: null, state: 'active' },
      { caller: '$operator', keep: (c) => c.manifest.type === 'workflow', enough: (found) => found.length >= 2 },
    );
    expect(two.map((c) => c.channel_id)).toEqual(['a1', 'b2']);
    expect(calls).toEqual([
      [0, null],
      [0, '1'],
      [1, null],
    ]);
  });
});
