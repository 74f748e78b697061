import {
  APICallError,
  EmptyResponseBodyError,
  InvalidResponseDataError,
  JSONParseError,
  LoadAPIKeyError,
  TypeValidationError,
  type LanguageModelV3,
  type LanguageModelV3Prompt,
} from '@ai-sdk/provider';
import { Ag2netError, type ErrorCode } from '@ag2net/protocol';
import { wrapLanguageModel } from 'ai';
import { setTimeout as sleep } from 'node:timers/promises';
import { FailureKind, excTypeOf, modelErrorCause, promptTexts, type FailureCause } from './cause.js';
import { modelIdentity } from './identity.js';
import { noteModelRetry } from './meter.js';

/**
 * How long one model call may take before it is abandoned, in ms (`ModelLimits.timeoutMs`): 30 s. A turn asks for
 * the whole answer at once (no streaming), so its first token reaches the person with its last; the agents' answers
 * are a few sentences, which hosted models give in a few seconds and a local model on a CPU in well under 30 s. A
 * person who sees nothing for longer takes the model for dead, and an endpoint that accepts the connection and never
 * answers should say so in the same time. Raise it (`timeout_ms` in the runner's file) for long answers.
 */
export const DEFAULT_MODEL_TIMEOUT_MS = 30_000;
/** How many times a model call that failed for a transient reason is tried again (`ModelLimits.maxRetries`). */
export const DEFAULT_MODEL_MAX_RETRIES = 2;
/** The pause before the first retry, in ms; it doubles for each further one (`ModelLimits.retryDelayMs`). */
export const DEFAULT_MODEL_RETRY_DELAY_MS = 1_000;

/** Limits of each call to a model built by `createModel`. */
export interface ModelLimits {
  /** One attempt of one model call may take this long, in ms; default `DEFAULT_MODEL_TIMEOUT_MS`. Not retried. */
  readonly timeoutMs?: number;
  /**
   * Retries of an attempt that failed for a transient reason (HTTP 408, 409, 429, 5xx, the endpoint unreachable);
   * default `DEFAULT_MODEL_MAX_RETRIES`; 0 for none.
   */
  readonly maxRetries?: number;
  /** Pause before the first retry, in ms, doubling after each; default `DEFAULT_MODEL_RETRY_DELAY_MS`. */
  readonly retryDelayMs?: number;
}

/** Stable codes of a failed model call, carried in `ag2.turn.failed` as `code`; the `model` codes of `ERROR_CODES`. */
export const ModelFailureCode = {
  /** The endpoint refused the credentials (HTTP 401 or 403). */
  Auth: 'model_auth',
  /** An attempt took longer than `timeoutMs`. */
  Timeout: 'model_timeout',
  /** Transient failures (5xx, 429, unreachable) outlasted the retries. */
  Unavailable: 'model_unavailable',
  /** The endpoint answered, but not with a completion the provider could read. */
  MalformedOutput: 'model_malformed_output',
  /** The endpoint refused the request for another reason (another 4xx). */
  Rejected: 'model_rejected',
  /** The call failed otherwise before the endpoint answered (e.g. a base URL the HTTP client refuses). */
  Error: 'model_error',
} as const satisfies Record<string, ErrorCode>;
export type ModelFailureCode = (typeof ModelFailureCode)[keyof typeof ModelFailureCode];

/** What a `ModelCallError` knows beyond its code and reason. */
export interface ModelCallErrorOptions {
  /** How many calls were made, the failing one included. */
  readonly attempts: number;
  /** The provider's error. */
  readonly cause?: unknown;
  /** What the call met, scrubbed for people and logs (see `FailureCause`). */
  readonly detail?: FailureCause;
  /** The model that failed, as a passport names it (`modelIdentity`). */
  readonly model?: { readonly provider: string; readonly model: string };
}

/**
 * A model call failed for good (after its retries). `reason` is one short sentence for people; it never holds the
 * prompt, the key or the endpoint's body. The provider's error is the `cause`; `detail` says what it was in words
 * that may be shown (`null` when not known). `code` is one of `ModelFailureCode`; `model_timeout` and
 * `model_unavailable` are retryable (a later call may succeed). Local: never on the wire as such — the default handler
 * turns it into an `ag2.turn.failed` event.
 */
export class ModelCallError extends Ag2netError {
  override readonly name = 'ModelCallError';
  /** How many calls were made, the failing one included. */
  readonly attempts: number;
  readonly detail: FailureCause | null;
  readonly model: { readonly provider: string; readonly model: string } | null;
  constructor(
    override readonly code: ModelFailureCode,
    readonly reason: string,
    options: ModelCallErrorOptions,
  ) {
    super(code, reason, { cause: options.cause });
    this.attempts = options.attempts;
    this.detail = options.detail ?? null;
    this.model = options.model ?? null;
  }
}

/**
 * `model` with a timeout per attempt and its own retries of transient failures. Its final error is a
 * `ModelCallError`, which the AI SDK does not retry again (it retries only `APICallError`s), with its cause scrubbed
 * of what looks like a secret and of anything quoting the request.
 */
export function withModelLimits(model: LanguageModelV3, limits: ModelLimits = {}): LanguageModelV3 {
  return limitModel(model, limits, []);
}

/** `withModelLimits`, scrubbing `secrets` (the keys the model was built with) from its causes as well. */
export function limitModel(model: LanguageModelV3, limits: ModelLimits, secrets: readonly string[]): LanguageModelV3 {
  const timeoutMs = limits.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS;
  const maxRetries = limits.maxRetries ?? DEFAULT_MODEL_MAX_RETRIES;
  const retryDelayMs = limits.retryDelayMs ?? DEFAULT_MODEL_RETRY_DELAY_MS;
  const identity = modelIdentity(model);
  const attempt = async <T>(
    params: { readonly abortSignal?: AbortSignal | undefined; readonly prompt: LanguageModelV3Prompt },
    call: (signal: AbortSignal) => PromiseLike<T>,
  ) => {
    const outer = params.abortSignal;
    for (let n = 1; ; n++) {
      const timer = new AbortController();
      const handle = setTimeout(() => timer.abort(new Error(`model call timed out after ${timeoutMs} ms`)), timeoutMs);
      try {
        return await call(outer === undefined ? timer.signal : AbortSignal.any([outer, timer.signal]));
      } catch (err) {
        if (outer?.aborted === true) throw err;
        if (timer.signal.aborted) {
          const after = seconds(timeoutMs);
          throw new ModelCallError(ModelFailureCode.Timeout, `the model timed out after ${after}`, {
            attempts: n,
            cause: err,
            detail: { kind: FailureKind.Timeout, exc_type: 'TimeoutError', message: `no answer within ${after}` },
            model: identity,
          });
        }
        const transient = APICallError.isInstance(err) && err.isRetryable;
        if (transient && n <= maxRetries) {
          await sleep(retryDelayMs * 2 ** (n - 1), undefined, outer === undefined ? {} : { signal: outer });
          noteModelRetry();
          continue;
        }
        const failure = describeModelError(err, n) ?? {
          code: ModelFailureCode.Error,
          reason: `the model call failed (${excTypeOf(err)})`,
        };
        const detail = modelErrorCause(err, { secrets, request: promptTexts(params.prompt) });
        throw new ModelCallError(failure.code, failure.reason, { attempts: n, cause: err, detail, model: identity });
      } finally {
        clearTimeout(handle);
      }
    }
  };
  return wrapLanguageModel({
    model,
    middleware: {
      specificationVersion: 'v3',
      wrapGenerate: ({ params, model: inner }) =>
        attempt(params, (signal) => inner.doGenerate({ ...params, abortSignal: signal })),
      wrapStream: ({ params, model: inner }) =>
        attempt(params, (signal) => inner.doStream({ ...params, abortSignal: signal })),
    },
  });
}

/**
 * What went wrong with a model call, for people and programs, or `null` when `err` is not a model failure.
 * `attempts` is how many attempts were made (worded into transient failures).
 */
export function describeModelError(err: unknown, attempts = 1): { code: ModelFailureCode; reason: string } | null {
  if (err instanceof ModelCallError) return { code: err.code, reason: err.reason };
  if (
    JSONParseError.isInstance(err) ||
    TypeValidationError.isInstance(err) ||
    InvalidResponseDataError.isInstance(err) ||
    EmptyResponseBodyError.isInstance(err)
  ) {
    return { code: ModelFailureCode.MalformedOutput, reason: 'the model returned malformed output' };
  }
  if (LoadAPIKeyError.isInstance(err)) return { code: ModelFailureCode.Auth, reason: 'the model has no API key' };
  if (!APICallError.isInstance(err)) return null;
  const status = err.statusCode;
  if (status === 401 || status === 403) {
    return { code: ModelFailureCode.Auth, reason: 'the model rejected the API key' };
  }
  if (status !== undefined && status >= 200 && status < 300) {
    return { code: ModelFailureCode.MalformedOutput, reason: 'the model returned malformed output' };
  }
  const tries = attempts === 1 ? '1 attempt' : `${attempts} attempts`;
  if (err.isRetryable) {
    const what = status === undefined ? 'could not be reached' : `failed with HTTP ${status}`;
    return { code: ModelFailureCode.Unavailable, reason: `the model ${what} after ${tries}` };
  }
  return {
    code: ModelFailureCode.Rejected,
    reason: `the model rejected the request (HTTP ${status === undefined ? 'error' : String(status)})`,
  };
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
