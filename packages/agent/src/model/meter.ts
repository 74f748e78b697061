import type { LanguageModelV3 } from '@ai-sdk/provider';
import { wrapLanguageModel } from 'ai';
import { AsyncLocalStorage } from 'node:async_hooks';

/** How often one `Agent.ask` asked its model. */
export interface ModelCallCount {
  /** Requests made to the model: one per step, retries included. */
  attempts: number;
  /** Of `attempts`, those that repeated a request that had failed for a transient reason. */
  retries: number;
}

// The model's own retries (`limitModel`) happen inside one call the AI SDK makes, out of the counting wrapper's
// sight: they are told to the count of the `ask` they run in, found through the async context.
const counts = new AsyncLocalStorage<ModelCallCount>();

/** Runs `fn` (one `ask`) with `count` told about the model's own retries during it. */
export function countingModelCalls<T>(count: ModelCallCount, fn: () => Promise<T>): Promise<T> {
  return counts.run(count, fn);
}

/** A model's own retry of a failed request (`limitModel`): one more attempt and one more retry of the current `ask`. */
export function noteModelRetry(): void {
  const count = counts.getStore();
  if (count === undefined) return;
  count.attempts += 1;
  count.retries += 1;
}

/**
 * `model`, counting into `count` every request the AI SDK makes of it. A request made after one that failed is a retry
 * (the AI SDK's own, of a model without `limitModel`): within one `ask` the AI SDK only asks again after a failure
 * when it retries.
 */
export function countedModel(model: LanguageModelV3, count: ModelCallCount): LanguageModelV3 {
  let failed = false;
  const counted = async <T>(call: () => PromiseLike<T>): Promise<T> => {
    count.attempts += 1;
    if (failed) count.retries += 1;
    failed = false;
    try {
      return await call();
    } catch (err) {
      failed = true;
      throw err;
    }
  };
  return wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: 'v3',
      wrapGenerate: ({ doGenerate }) => counted(doGenerate),
      wrapStream: ({ doStream }) => counted(doStream),
    },
  });
}
