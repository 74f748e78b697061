import { ModelFailureCode } from '@ag2net/agent';
import { Ag2netError } from '@ag2net/protocol';

/**
 * The model failure an HTTP error status of an A2A endpoint is: refused credentials (401, 403) `model_auth`; a
 * timeout, too many requests or a server error `model_unavailable` (retryable); any other refusal `model_rejected`.
 */
function failureOfStatus(status: number): ModelFailureCode {
  if (status === 401 || status === 403) return ModelFailureCode.Auth;
  if (status === 408 || status === 429 || status >= 500) return ModelFailureCode.Unavailable;
  return ModelFailureCode.Rejected;
}

/**
 * The A2A endpoint answered an HTTP error status; its code is the model failure of that status. Local: the turn
 * reports it as a failed turn with its status.
 */
export class A2aHttpError extends Ag2netError {
  override readonly name = 'A2aHttpError';
  override readonly code: ModelFailureCode;
  constructor(readonly status: number) {
    const code = failureOfStatus(status);
    super(code, `the A2A endpoint answered HTTP ${status}`);
    this.code = code;
  }
}

/** The A2A endpoint sent more than the runner accepts for one answer. Code `model_malformed_output`. */
export class A2aAnswerTooLargeError extends Ag2netError {
  override readonly name = 'A2aAnswerTooLargeError';
  constructor(readonly limitBytes: number) {
    super(ModelFailureCode.MalformedOutput, `the answer exceeded ${limitBytes} bytes`);
  }
}

/**
 * The remote task ended without an answer: `failed`, `rejected` or `canceled` (its A2A state in `state`). Code
 * `model_error`.
 */
export class A2aTaskEndedError extends Ag2netError {
  override readonly name = 'A2aTaskEndedError';
  constructor(
    readonly state: string,
    /** What the agent said with the state, if anything; scrubbed and shortened before it is shown. */
    readonly said: string,
  ) {
    super(ModelFailureCode.Error, `the A2A task ended ${state}`);
  }
}

/**
 * The A2A endpoint sent something that is not an A2A stream event, or ended its stream without an answer. Code
 * `model_malformed_output`.
 */
export class A2aProtocolError extends Ag2netError {
  override readonly name = 'A2aProtocolError';
  constructor(message: string, options?: ErrorOptions) {
    super(ModelFailureCode.MalformedOutput, message, options);
  }
}
