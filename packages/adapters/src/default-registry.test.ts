import { describe, expect, it } from 'vitest';
import {
  AgentTarget,
  ConsultingAdapter,
  ConversationAdapter,
  DiscussionAdapter,
  WorkflowAdapter,
  createDefaultAdapterRegistry,
  createTransitionRegistry,
} from '@ag2net/adapters';

describe('createDefaultAdapterRegistry', () => {
  it('registers the four built-in protocols under version 1', () => {
    const registry = createDefaultAdapterRegistry();
    expect(registry.list().map((a) => `${a.manifest.type}@v${a.manifest.version}`)).toEqual([
      'consulting@v1',
      'conversation@v1',
      'discussion@v1',
      'workflow@v1',
    ]);
    expect(registry.get('consulting', 1)).toBeInstanceOf(ConsultingAdapter);
    expect(registry.get('conversation', 1)).toBeInstanceOf(ConversationAdapter);
    expect(registry.get('discussion', 1)).toBeInstanceOf(DiscussionAdapter);
    expect(registry.get('workflow', 1)).toBeInstanceOf(WorkflowAdapter);
  });

  it('hands the given transition registry to the workflow adapter', () => {
    const transitions = createTransitionRegistry();
    transitions.registerTarget('always_bob', () => new AgentTarget('bob'));
    const workflow = createDefaultAdapterRegistry({ transitions }).get('workflow', 1);
    expect(workflow).toBeInstanceOf(WorkflowAdapter);
    expect(workflow instanceof WorkflowAdapter && workflow.registry).toBe(transitions);
  });

  it('builds independent registries', () => {
    const a = createDefaultAdapterRegistry();
    const b = createDefaultAdapterRegistry();
    expect(a).not.toBe(b);
    expect(a.get('workflow', 1)).not.toBe(b.get('workflow', 1));
  });
});
