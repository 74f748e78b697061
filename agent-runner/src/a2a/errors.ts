/** The A2A endpoint answered an HTTP error status. Local: the turn reports it as a failed turn with its status. */
export class A2aHttpError extends Error {
  override readonly name = 'A2aHttpError';
  constructor(readonly status: number) {
    super(`the A2A endpoint answered HTTP ${status}`);
  }
}

/** The A2A endpoint sent more than the runner accepts for one answer. */
export class A2aAnswerTooLargeError extends Error {
  override readonly name = 'A2aAnswerTooLargeError';
  constructor(readonly limitBytes: number) {
    super(`the answer exceeded ${limitBytes} bytes`);
  }
}

/** The remote task ended without an answer: `failed`, `rejected` or `canceled` (its A2A state in `state`). */
export class A2aTaskEndedError extends Error {
  override readonly name = 'A2aTaskEndedError';
  constructor(
    readonly state: string,
    /** What the agent said with the state, if anything; scrubbed and shortened before it is shown. */
    readonly said: string,
  ) {
    super(`the A2A task ended ${state}`);
  }
}

/** The A2A endpoint sent something that is not an A2A stream event, or ended its stream without an answer. */
export class A2aProtocolError extends Error {
  override readonly name = 'A2aProtocolError';
}
