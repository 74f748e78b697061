import { repr } from '@ag2net/protocol/internal';
import { BUILTIN_EVALUATORS, type ExpectationEvaluator } from './evaluators.js';
import { BUILTIN_HANDLERS, type ViolationHandler } from './violation-handlers.js';

/** The evaluators and handlers one hub knows, by name. */
export interface ExpectationRegistry {
  readonly evaluators: ReadonlyMap<string, ExpectationEvaluator>;
  readonly handlers: ReadonlyMap<string, ViolationHandler>;
}

/**
 * The built-ins plus `evaluators` and `handlers`. A custom evaluator replaces a built-in of the same name (as AG2's
 * registration does); a custom handler may not take a built-in's name, because adapters and the hub act on those
 * names in the log (`hide`, `auto_close`).
 */
export function createExpectationRegistry(
  evaluators: readonly ExpectationEvaluator[],
  handlers: readonly ViolationHandler[],
): ExpectationRegistry {
  const builtinHandlers = new Set(BUILTIN_HANDLERS.map((h) => h.name));
  for (const h of handlers) {
    if (builtinHandlers.has(h.name)) throw new TypeError(`violation handler ${repr(h.name)} is built in`);
  }
  return {
    evaluators: new Map([...BUILTIN_EVALUATORS, ...evaluators].map((e) => [e.name, e])),
    handlers: new Map([...BUILTIN_HANDLERS, ...handlers].map((h) => [h.name, h])),
  };
}
