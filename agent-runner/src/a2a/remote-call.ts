import { Role, type AgentCard } from '@a2a-js/sdk';
import { Client, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { textAgentCard } from './card.js';
import { boundedFetch } from './bounded-fetch.js';
import { A2aAnswerTooLargeError, A2aProtocolError, A2aTaskEndedError } from './errors.js';
import {
  StreamEventSchema,
  outcomeOf,
  stateName,
  statusText,
  textOf,
  type StreamEvent,
  type StreamStatus,
} from './stream-events.js';

/** How long a cancelled call waits for the endpoint to take its `CancelTask`, in ms: 5 s. */
export const A2A_CANCEL_TIMEOUT_MS = 5_000;

/** One call to a remote A2A agent. */
export interface RemoteCall {
  /** The JSON-RPC endpoint. */
  readonly url: string;
  /** Sent with every request of the call (credentials). */
  readonly headers: Readonly<Record<string, string>>;
  /** The message's text. */
  readonly text: string;
  /** A2A `messageId`: the same for every attempt at one turn. */
  readonly messageId: string;
  /** A2A `contextId`: one per channel, so that the agent can tell its conversations apart. */
  readonly contextId: string;
  /** Largest answer, UTF-8 bytes. */
  readonly maxAnswerBytes: number;
  /** Stops the call: the stream is dropped and the task, once known, cancelled (`CancelTask`). */
  readonly signal: AbortSignal;
  /** Told the remote task's id once the stream names it (from then on, a cancelled call cancels the task). */
  readonly onTask?: (taskId: string) => void;
  /** Given each `CancelTask` request as it is sent (a promise that never rejects), e.g. to wait for it at exit. */
  readonly onCancel?: (sent: Promise<void>) => void;
  /** Told when cancelling the task failed (never thrown: the turn is over either way). */
  readonly onCancelFailed?: (err: unknown) => void;
  /** The fetch underneath; default the global one. */
  readonly fetch?: typeof fetch;
}

/**
 * Sends `text` to the agent with `SendStreamingMessage` and reads its stream to the end: the answer is the text of
 * the message it answers with, or of its task's artifacts (else its final status message) once the task completes
 * or asks for input. Every event is validated (`StreamEventSchema`). Throws `A2aTaskEndedError` for a task that
 * failed, was rejected or cancelled, `A2aAnswerTooLargeError` past `maxAnswerBytes` (the HTTP bodies are bounded too,
 * at four times that and 64 KiB more), `A2aHttpError`, `A2aProtocolError`, the fetch's errors, or the signal's reason.
 */
export async function callRemoteAgent(call: RemoteCall): Promise<string> {
  const fetchImpl = boundedFetch({
    headers: call.headers,
    maxBytes: call.maxAnswerBytes * 4 + 64 * 1024,
    ...(call.fetch === undefined ? {} : { fetch: call.fetch }),
  });
  const card = cardFor(call.url);
  const client = new Client(await new JsonRpcTransportFactory({ fetchImpl }).create(call.url, card), card);
  const answer = new Answer(call.maxAnswerBytes);
  let taskId: string | null = null;
  const cancelling: Promise<void>[] = [];
  const cancel = (): void => {
    if (taskId === null) return;
    const sent = client
      .cancelTask(
        { tenant: '', id: taskId, metadata: undefined },
        { signal: AbortSignal.timeout(A2A_CANCEL_TIMEOUT_MS) },
      )
      .then(
        () => undefined,
        (err: unknown) => call.onCancelFailed?.(err),
      );
    cancelling.push(sent);
    call.onCancel?.(sent);
  };
  call.signal.addEventListener('abort', cancel, { once: true });
  try {
    const stream = client.sendMessageStream(
      {
        tenant: '',
        message: {
          messageId: call.messageId,
          contextId: call.contextId,
          taskId: '',
          role: Role.ROLE_USER,
          parts: [{ content: { $case: 'text', value: call.text }, metadata: undefined, filename: '', mediaType: '' }],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
        configuration: undefined,
        metadata: undefined,
      },
      { signal: call.signal },
    );
    for await (const raw of stream) {
      const parsed = StreamEventSchema.safeParse(raw);
      if (!parsed.success) throw new A2aProtocolError('the endpoint sent an event that is not an A2A stream event');
      const event = parsed.data;
      if (taskId === null) {
        taskId = taskIdOf(event);
        if (taskId !== null) call.onTask?.(taskId);
      }
      const done = answer.take(event);
      if (done !== null) return done;
    }
    call.signal.throwIfAborted();
    throw new A2aProtocolError('the stream ended before the agent answered');
  } finally {
    call.signal.removeEventListener('abort', cancel);
    // The turn ends once the cancellation was sent (at most A2A_CANCEL_TIMEOUT_MS): a runner that is stopping must
    // not exit before the agent was told.
    await Promise.all(cancelling);
  }
}

/**
 * The card the client is built from: the configured endpoint, JSON-RPC, streaming. The agent's own card is not
 * fetched, so that the credentials only ever go to the configured URL (a card may name any URL).
 */
function cardFor(url: string): AgentCard {
  return textAgentCard({ name: 'remote', description: '', url, version: '' });
}

function taskIdOf(event: StreamEvent): string | null {
  const { payload } = event;
  switch (payload.$case) {
    case 'task':
      return payload.value.id;
    case 'statusUpdate':
    case 'artifactUpdate':
      return payload.value.taskId;
    case 'message':
      return null;
    default:
      return assertNever(payload);
  }
}

/** The answer as the stream builds it, held to `maxBytes`. */
class Answer {
  readonly #artifacts = new Map<string, string>();
  #bytes = 0;
  constructor(readonly maxBytes: number) {}

  /** Takes one event; the answer once the stream has given it, else `null`. */
  take(event: StreamEvent): string | null {
    const { payload } = event;
    switch (payload.$case) {
      case 'message':
        return this.#bounded(textOf(payload.value.parts));
      case 'task':
        for (const artifact of payload.value.artifacts)
          this.#artifact(artifact.artifactId, textOf(artifact.parts), false);
        return this.#settle(payload.value.status);
      case 'artifactUpdate':
        if (payload.value.artifact != null) {
          const { artifactId, parts } = payload.value.artifact;
          this.#artifact(artifactId, textOf(parts), payload.value.append);
        }
        return null;
      case 'statusUpdate':
        return this.#settle(payload.value.status);
      default:
        return assertNever(payload);
    }
  }

  #settle(status: StreamStatus | null | undefined): string | null {
    if (status == null) return null;
    const outcome = outcomeOf(status.state);
    if (outcome === 'running') return null;
    const said = this.#bounded(statusText(status));
    if (outcome === 'ended') throw new A2aTaskEndedError(stateName(status.state), said);
    const artifacts = [...this.#artifacts.values()].filter((t) => t !== '');
    return artifacts.length > 0 ? artifacts.join('\n\n') : said;
  }

  #artifact(id: string, text: string, append: boolean): void {
    const before = this.#artifacts.get(id) ?? '';
    this.#bytes -= Buffer.byteLength(before);
    const next = append ? before + text : text;
    this.#bytes += Buffer.byteLength(next);
    if (this.#bytes > this.maxBytes) throw new A2aAnswerTooLargeError(this.maxBytes);
    this.#artifacts.set(id, next);
  }

  #bounded(text: string): string {
    if (Buffer.byteLength(text) > this.maxBytes) throw new A2aAnswerTooLargeError(this.maxBytes);
    return text;
  }
}

/** Unreachable with `StreamEventSchema` as it is; never quotes the event, which is the endpoint's. */
function assertNever(_value: never): never {
  throw new A2aProtocolError('unexpected stream event');
}
