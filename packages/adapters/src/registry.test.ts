import { NotFoundError } from '@ag2net/protocol';
import { describe, expect, it } from 'vitest';
import { ConsultingAdapter } from './consulting.js';
import { ConversationAdapter } from './conversation.js';
import { AdapterRegistry } from './registry.js';

describe('AdapterRegistry', () => {
  it('finds adapters by type and version', () => {
    const consulting = new ConsultingAdapter();
    const registry = new AdapterRegistry().register(consulting).register(new ConversationAdapter());
    expect(registry.get('consulting', 1)).toBe(consulting);
    expect(registry.size).toBe(2);
    expect(registry.list().map((a) => a.manifest.type)).toEqual(['consulting', 'conversation']);
  });

  it('throws NotFoundError with AG2 message for an unknown type or version', () => {
    const registry = new AdapterRegistry().register(new ConsultingAdapter());
    expect(() => registry.get('consulting', 2)).toThrow(new NotFoundError("no adapter registered for 'consulting'@v2"));
    expect(() => registry.get('debate', 1)).toThrow(NotFoundError);
    expect(registry.find('debate', 1)).toBeUndefined();
  });

  it('replaces an adapter registered again under the same key', () => {
    const first = new ConsultingAdapter();
    const second = new ConsultingAdapter();
    const registry = new AdapterRegistry().register(first).register(second);
    expect(registry.get('consulting', 1)).toBe(second);
    expect(registry.size).toBe(1);
  });

  it('keeps registries independent of each other', () => {
    const a = new AdapterRegistry().register(new ConsultingAdapter());
    const b = new AdapterRegistry();
    expect(a.size).toBe(1);
    expect(b.find('consulting', 1)).toBeUndefined();
  });
});
