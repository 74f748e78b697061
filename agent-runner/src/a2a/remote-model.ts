import { FailureKind, ModelCallError, ModelFailureCode, currentTurn, type FailureCause } from '@ag2net/agent';
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import { A2aAnswerTooLargeError, A2aHttpError, A2aProtocolError, A2aTaskEndedError } from './errors.js';
import { callRemoteAgent } from './remote-call.js';

/** The provider id of a remote A2A agent's model; passports name it `a2a`. */
export const A2A_PROVIDER = 'ag2net.a2a';

/** Options of `createRemoteAgentModel`. */
export interface RemoteAgentModelOptions {
  /** The agent's JSON-RPC endpoint. */
  readonly url: string;
  /** Headers of every call (credentials from the runner's configuration). */
  readonly headers: Readonly<Record<string, string>>;
  /** How long one call may take, in ms. */
  readonly timeoutMs: number;
  /** Largest answer, UTF-8 bytes. */
  readonly maxAnswerBytes: number;
  /** Told each remote task's id once the agent names it. */
  readonly onTask?: (taskId: string) => void;
  /** Given each `CancelTask` request as it is sent (it never rejects). */
  readonly onCancel?: (sent: Promise<void>) => void;
  /** Told when the remote task could not be cancelled. */
  readonly onCancelFailed?: (err: unknown) => void;
  /** The fetch underneath; default the global one. */
  readonly fetch?: typeof fetch;
}

const NO_USAGE: LanguageModelV3Usage = {
  inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: undefined, text: undefined, reasoning: undefined },
};

/**
 * A remote A2A agent seen as a language model, so that the default handler takes its turns like any agent's (turn
 * order, turn locks, once per trigger, cancellation, failure notices): each generation is one `SendStreamingMessage`
 * call whose final text is the answer. The model never calls tools; the network tools the handler offers go unused.
 * A failed call is a `ModelCallError` whose `detail` says what the endpoint did, and is never retried.
 */
export function createRemoteAgentModel(options: RemoteAgentModelOptions): LanguageModelV3 {
  return new RemoteAgentModel(options);
}

class RemoteAgentModel implements LanguageModelV3 {
  readonly specificationVersion = 'v3';
  readonly provider = A2A_PROVIDER;
  readonly supportedUrls = {};
  readonly modelId: string;
  readonly #options: RemoteAgentModelOptions;

  constructor(options: RemoteAgentModelOptions) {
    this.#options = options;
    // The host names which agent answers; the path and any credentials in the URL stay in the configuration.
    this.modelId = new URL(options.url).host;
  }

  async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    const text = await this.#call(options);
    return { content: [{ type: 'text', text }], finishReason: STOP, usage: NO_USAGE, warnings: [] };
  }

  async doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    const text = await this.#call(options);
    const parts: LanguageModelV3StreamPart[] = [
      { type: 'stream-start', warnings: [] },
      { type: 'text-start', id: 'answer' },
      { type: 'text-delta', id: 'answer', delta: text },
      { type: 'text-end', id: 'answer' },
      { type: 'finish', usage: NO_USAGE, finishReason: STOP },
    ];
    return {
      stream: new ReadableStream({
        start(controller) {
          for (const part of parts) controller.enqueue(part);
          controller.close();
        },
      }),
    };
  }

  async #call(options: LanguageModelV3CallOptions): Promise<string> {
    const { timeoutMs } = this.#options;
    const timer = new AbortController();
    const handle = setTimeout(() => timer.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const outer = options.abortSignal;
    const signal = outer === undefined ? timer.signal : AbortSignal.any([outer, timer.signal]);
    const turn = currentTurn();
    try {
      return await callRemoteAgent({
        url: this.#options.url,
        headers: this.#options.headers,
        text: promptText(options.prompt),
        // One message id per turn, so that an agent that keeps them can tell a retried turn from a new one.
        messageId: turn === undefined ? crypto.randomUUID() : `${turn.triggerId}-${turn.client.agentId}`,
        contextId: turn?.channelId ?? crypto.randomUUID(),
        maxAnswerBytes: this.#options.maxAnswerBytes,
        signal,
        ...(this.#options.onTask === undefined ? {} : { onTask: this.#options.onTask }),
        ...(this.#options.onCancel === undefined ? {} : { onCancel: this.#options.onCancel }),
        ...(this.#options.onCancelFailed === undefined ? {} : { onCancelFailed: this.#options.onCancelFailed }),
        ...(this.#options.fetch === undefined ? {} : { fetch: this.#options.fetch }),
      });
    } catch (err) {
      if (outer?.aborted === true) throw outer.reason;
      throw this.#failure(err, timer.signal.aborted);
    } finally {
      clearTimeout(handle);
    }
  }

  #failure(err: unknown, timedOut: boolean): ModelCallError {
    const model = { provider: 'a2a', model: this.modelId };
    const fail = (code: ModelFailureCode, reason: string, detail: FailureCause): ModelCallError =>
      new ModelCallError(code, reason, { attempts: 1, cause: err, detail, model });
    if (timedOut) {
      const after = `${this.#options.timeoutMs / 1000} s`;
      return fail(ModelFailureCode.Timeout, `the A2A agent did not answer within ${after}`, {
        kind: FailureKind.Timeout,
        exc_type: 'TimeoutError',
        message: `no answer within ${after}`,
      });
    }
    if (err instanceof A2aHttpError) {
      const { status } = err;
      return fail(err.code, `the A2A agent failed with HTTP ${status}`, {
        kind: FailureKind.Http,
        exc_type: err.name,
        status,
      });
    }
    if (err instanceof A2aAnswerTooLargeError) {
      return fail(ModelFailureCode.MalformedOutput, `the A2A agent's answer exceeded ${err.limitBytes} bytes`, {
        kind: FailureKind.MalformedOutput,
        exc_type: err.name,
        code: 'answer_too_large',
      });
    }
    if (err instanceof A2aTaskEndedError) {
      const said = this.#scrub(err.said).slice(0, 160);
      return fail(ModelFailureCode.Error, `the A2A agent's task ended ${err.state}`, {
        kind: FailureKind.Error,
        exc_type: err.name,
        code: err.state,
        ...(said === '' ? {} : { message: said }),
      });
    }
    if (err instanceof A2aProtocolError) {
      return fail(ModelFailureCode.MalformedOutput, 'the A2A agent answered something that is not A2A', {
        kind: FailureKind.MalformedOutput,
        exc_type: err.name,
        message: err.message,
      });
    }
    const connection = connectionCode(err);
    if (connection !== null) {
      return fail(ModelFailureCode.Unavailable, 'the A2A agent could not be reached', {
        kind: FailureKind.Connection,
        exc_type: 'TypeError',
        code: connection,
        message: `${connection} ${this.modelId}`,
      });
    }
    // The SDK's own errors quote the endpoint's body: their class only.
    const name = err instanceof Error ? err.name : typeof err;
    return fail(ModelFailureCode.Error, `the call to the A2A agent failed (${name})`, {
      kind: FailureKind.Error,
      exc_type: name,
    });
  }

  /** `text` without the configured header values. */
  #scrub(text: string): string {
    let out = text;
    for (const secret of Object.values(this.#options.headers)) {
      if (secret.length >= 4) out = out.split(secret).join('***');
    }
    return out;
  }
}

const STOP = { unified: 'stop', raw: 'stop' } as const;

/**
 * What the agent is sent: the texts of the prompt's messages since its own last answer (what the others said since
 * then, the trigger last), joined with blank lines. System prompts and earlier history are not sent: the agent keeps
 * its own conversation per `contextId` (the channel).
 */
export function promptText(prompt: LanguageModelV3Prompt): string {
  let start = 0;
  prompt.forEach((message, i) => {
    if (message.role === 'assistant') start = i + 1;
  });
  const texts: string[] = [];
  for (const message of prompt.slice(start)) {
    if (message.role !== 'user') continue;
    for (const part of message.content) if (part.type === 'text') texts.push(part.text);
  }
  return texts.join('\n\n');
}

/** The system error code of a failed fetch (`ECONNREFUSED`), or `null` when `err` is no connection failure. */
function connectionCode(err: unknown): string | null {
  if (!(err instanceof TypeError)) return null;
  let cause: unknown = err.cause;
  for (let depth = 0; depth < 4 && cause !== undefined && cause !== null; depth++) {
    const code: unknown = Reflect.get(Object(cause), 'code');
    if (typeof code === 'string') return code;
    cause = Reflect.get(Object(cause), 'cause');
  }
  // undici's own refusals (a port fetch never dials) carry no system code.
  return err.message === 'fetch failed' ? 'fetch_failed' : null;
}
