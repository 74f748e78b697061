import {
  APICallError,
  EmptyResponseBodyError,
  InvalidResponseDataError,
  JSONParseError,
  LoadAPIKeyError,
  LoadSettingError,
  TypeValidationError,
  type LanguageModelV3Prompt,
} from '@ai-sdk/provider';
import { failureCauseLine } from '@ag2net/protocol';
import { scrubMessage } from './scrub.js';

/** What kind of thing a failed turn met; `FailureCause.kind`. */
export const FailureKind = {
  /** The model did not answer within its timeout. */
  Timeout: 'timeout',
  /** The endpoint could not be reached (refused, unknown host, reset). */
  Connection: 'connection',
  /** The endpoint answered with an HTTP error status. */
  Http: 'http',
  /** The endpoint answered something the provider cannot read. */
  MalformedOutput: 'malformed_output',
  /** The call could not be made as configured (no API key, a setting missing). */
  Config: 'config',
  /** The hub refused something the turn asked of it. */
  Hub: 'hub',
  /** Anything else. */
  Error: 'error',
} as const;
export type FailureKind = (typeof FailureKind)[keyof typeof FailureKind];

/**
 * What a failed turn met, as logs and the `cause` of `ag2.turn.failed` carry it (wire names): never a key, a token,
 * URL credentials, the prompt or a response body. `message` is short (`MAX_CAUSE_MESSAGE`) and left out when all it
 * could say would quote the request.
 */
export interface FailureCause {
  readonly kind: FailureKind;
  /** The error's class: `APICallError`, `LoadAPIKeyError`, `TimeoutError`, `NetworkError`, `TypeError`, … */
  readonly exc_type: string;
  /** The HTTP status the endpoint answered. */
  readonly status?: number;
  /** The provider's error code (`invalid_api_key`), a system error code (`ECONNREFUSED`), a hub wire code. */
  readonly code?: string;
  /** e.g. `ECONNREFUSED 127.0.0.1:9`, or the provider's own message with secrets scrubbed. */
  readonly message?: string;
}

/** What a cause's text must not hold. */
export interface CauseGuard {
  /** Secrets to scrub wherever they occur (the model's API key), beyond what looks like one. */
  readonly secrets?: readonly string[];
  /** The request's texts (prompt, tool results): a message quoting them is left out. */
  readonly request?: readonly string[];
}

/** The class name of an error as people know it (`APICallError`, not the SDK's `AI_APICallError`). */
export function excTypeOf(err: unknown): string {
  if (!(err instanceof Error)) return typeof err;
  return err.name.replace(/^AI_/, '') || 'Error';
}

/** The cause of a model call that failed with `err` (a provider's error, or anything the call threw). */
export function modelErrorCause(err: unknown, guard: CauseGuard = {}): FailureCause {
  const exc_type = excTypeOf(err);
  if (APICallError.isInstance(err)) {
    const status = err.statusCode;
    if (status === undefined) return connectionCause(err, exc_type);
    const code = providerCode(err.data);
    const message = scrubMessage(err.message, guard);
    return {
      kind: status >= 200 && status < 300 ? FailureKind.MalformedOutput : FailureKind.Http,
      exc_type,
      status,
      ...(code === null ? {} : { code }),
      ...(message === null || message === '' ? {} : { message }),
    };
  }
  // Their messages quote what the endpoint answered: say what was wrong with it instead.
  if (JSONParseError.isInstance(err)) {
    return { kind: FailureKind.MalformedOutput, exc_type, message: 'the answer is not valid JSON' };
  }
  if (TypeValidationError.isInstance(err) || InvalidResponseDataError.isInstance(err)) {
    return { kind: FailureKind.MalformedOutput, exc_type, message: 'the answer does not have the expected shape' };
  }
  if (EmptyResponseBodyError.isInstance(err)) {
    return { kind: FailureKind.MalformedOutput, exc_type, message: 'the answer is empty' };
  }
  const kind = LoadAPIKeyError.isInstance(err) || LoadSettingError.isInstance(err) ? FailureKind.Config : 'error';
  return withMessage({ kind, exc_type }, err, guard);
}

/** A cause with `err`'s message, scrubbed, when it has one worth showing. */
export function withMessage(cause: FailureCause, err: unknown, guard: CauseGuard): FailureCause {
  const raw = err instanceof Error ? err.message : typeof err === 'string' ? err : '';
  const message = raw === '' ? null : scrubMessage(raw, guard);
  return message === null || message === '' ? cause : { ...cause, message };
}

/**
 * `401 invalid_api_key: Incorrect API key provided: ***` — a cause on one line, for people and log readers; takes a
 * `FailureCause` or the `cause` of a received `ag2.turn.failed` (the protocol's `failureCauseLine`).
 */
export function causeLine(cause: {
  readonly kind: string;
  readonly status?: number;
  readonly code?: string;
  readonly message?: string;
}): string {
  return failureCauseLine(cause);
}

/** Every text of a prompt, for `CauseGuard.request`. */
export function promptTexts(prompt: LanguageModelV3Prompt): string[] {
  const texts: string[] = [];
  for (const message of prompt) {
    if (typeof message.content === 'string') {
      texts.push(message.content);
      continue;
    }
    for (const part of message.content) {
      if (part.type === 'text' || part.type === 'reasoning') texts.push(part.text);
      else if (part.type === 'tool-call') texts.push(JSON.stringify(part.input));
      else if (part.type === 'tool-result') texts.push(JSON.stringify(part.output));
    }
  }
  return texts;
}

/** The endpoint was not reached: the system error under the fetch failure says why (`ECONNREFUSED 127.0.0.1:9`). */
function connectionCause(err: APICallError, exc_type: string): FailureCause {
  const system = systemError(err.cause);
  const host = hostOf(err.url);
  const where =
    system !== null && typeof system.address === 'string' && typeof system.port === 'number'
      ? `${system.address}:${String(system.port)}`
      : host;
  const what = system?.code ?? (system?.message || err.message.replace(/^Cannot connect to API:\s*/, ''));
  // The system error's own message names the host already (`getaddrinfo ENOTFOUND example.invalid`).
  const message = scrubMessage(where === '' || what.includes(where) ? what : `${what} ${where}`) ?? '';
  return {
    kind: FailureKind.Connection,
    exc_type,
    ...(system?.code === undefined ? {} : { code: system.code }),
    ...(message === '' ? {} : { message }),
  };
}

interface SystemError {
  readonly code?: string;
  readonly message: string;
  readonly address?: unknown;
  readonly port?: unknown;
}

/** The innermost error with a system `code` under `err` (an `AggregateError` counts by its first error). */
function systemError(err: unknown): SystemError | null {
  let found: SystemError | null = null;
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const code: unknown = Reflect.get(current, 'code');
    const here: SystemError = {
      message: current.message,
      ...(typeof code === 'string' ? { code } : {}),
      address: Reflect.get(current, 'address'),
      port: Reflect.get(current, 'port'),
    };
    if (found === null || typeof code === 'string') found = here;
    current = current instanceof AggregateError && current.errors.length > 0 ? current.errors[0] : current.cause;
  }
  return found;
}

/** `host:port` of a URL, without its credentials, path or query; `''` when it is not one. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/** The provider's error code in its error body: OpenAI's `error.code`, else `error.type` (Anthropic's). */
function providerCode(data: unknown): string | null {
  const error: unknown = typeof data === 'object' && data !== null ? Reflect.get(data, 'error') : undefined;
  if (typeof error !== 'object' || error === null) return null;
  for (const key of ['code', 'type']) {
    const value: unknown = Reflect.get(error, key);
    if (typeof value === 'string' && value !== '') return value.slice(0, 128);
    if (typeof value === 'number') return String(value);
  }
  return null;
}
