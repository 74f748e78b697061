import { ConsultingAdapter } from './consulting.js';
import { ConversationAdapter } from './conversation.js';
import { DiscussionAdapter } from './discussion.js';
import { AdapterRegistry } from './registry.js';
import { WorkflowAdapter } from './workflow/adapter.js';
import type { TransitionRegistry } from './workflow/registry.js';

/** Options of `createDefaultAdapterRegistry`. */
export interface DefaultAdapterRegistryOptions {
  /** Targets and conditions workflow graphs may use; default the built-in ones (`createTransitionRegistry()`). */
  readonly transitions?: TransitionRegistry;
}

/** A fresh registry with the four built-in protocols: consulting, conversation, discussion and workflow, all v1. */
export function createDefaultAdapterRegistry(options: DefaultAdapterRegistryOptions = {}): AdapterRegistry {
  const workflow =
    options.transitions === undefined ? new WorkflowAdapter() : new WorkflowAdapter({ registry: options.transitions });
  return new AdapterRegistry()
    .register(new ConsultingAdapter())
    .register(new ConversationAdapter())
    .register(new DiscussionAdapter())
    .register(workflow);
}
