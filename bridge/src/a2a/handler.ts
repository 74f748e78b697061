import {
  Role,
  TaskState,
  type AgentCard,
  type CancelTaskRequest,
  type GetTaskRequest,
  type ListTasksRequest,
  type ListTasksResponse,
  type Message,
  type SendMessageRequest,
  type StreamResponse,
  type SubscribeToTaskRequest,
  type Task,
  type TaskPushNotificationConfig,
  type ListTaskPushNotificationConfigsResponse,
} from '@a2a-js/sdk';
import {
  PushNotificationNotSupportedError,
  RequestMalformedError,
  TaskNotCancelableError,
  UnsupportedOperationError,
} from '@a2a-js/sdk/errors';
import type { A2ARequestHandler } from '@a2a-js/sdk/server';
import type { HumanClient } from '@ag2net/client';
import { AuthError, ChannelState, EV_TEXT, EnvelopeSchema, newId } from '@ag2net/protocol';
import { createHash } from 'node:crypto';
import type { Actor } from '../route.js';
import { hubNoLongerServes } from '../session-end.js';
import type { StreamWait } from '../streams.js';
import { listTasks } from './list-tasks.js';
import { a2aErrorOf } from './rpc-errors.js';
import { asCaller, contextChannel, followLog, readTask } from './task-log.js';
import {
  A2A_CANCEL_REASON,
  answerArtifact,
  isSettled,
  openTask,
  statusOf,
  stepTask,
  taskIdOf,
  toA2aTask,
  type TaskParties,
  type TaskView,
} from './task-fold.js';
import { requestData } from './parts.js';

/** How long a blocking `message/send` waits for the answer before it answers the task as it stands, in ms. */
export const DEFAULT_BLOCKING_WAIT_MS = 60_000;
/** How long `tasks/cancel` waits for the channel's end to reach the log after closing it, in ms. */
const CANCEL_SETTLE_MS = 10_000;
/** The channel type a new A2A context opens: two parties, either may speak at any time, until closed. */
const CONTEXT_CHANNEL_TYPE = 'conversation';

/** What a handler serves one request with. */
export interface ChannelTaskHandlerOptions {
  /** The caller: a person signed in as themself. */
  readonly actor: Actor;
  /** The caller's participant; `null` for a caller that is not a person (it may read the card only). */
  readonly human: HumanClient | null;
  readonly card: AgentCard;
  readonly parties: TaskParties;
  /** How streams and waits follow the log; its `signal` aborts when the client leaves or the bridge stops. */
  readonly wait: StreamWait;
  /** See `DEFAULT_BLOCKING_WAIT_MS`. */
  readonly blockingWaitMs: number;
}

/** What a message says, as a text envelope's `event_data` (`requestData`): text and data parts; files are refused. */
function requestContent(message: Message | undefined): ReturnType<typeof requestData> {
  if (message === undefined) throw new RequestMalformedError('params.message is required');
  if (message.role === Role.ROLE_AGENT) throw new RequestMalformedError('a request message has the role user');
  return requestData(message.parts);
}

/**
 * The envelope id of a client's message in a channel: derived from its `messageId`, so a retried send is admitted
 * once (the hub admits an envelope id once); a fresh id when the client gave none.
 */
function requestEnvelopeId(parties: TaskParties, channelId: string, messageId: string): string {
  if (messageId === '') return newId();
  const digest = createHash('sha256').update(`${parties.callerId}\n${channelId}\n${messageId}`).digest('hex');
  return `a2a-${digest}`;
}

/** The stream events of a task that just settled: its answer as an artifact, then its status. */
function settledEvents(view: TaskView): StreamResponse[] {
  const taskId = taskIdOf(view.channelId, view.request.sequence ?? 0);
  const ids = { taskId, contextId: view.channelId };
  return [
    ...(view.answer === null
      ? []
      : [
          {
            payload: {
              $case: 'artifactUpdate' as const,
              value: {
                ...ids,
                artifact: answerArtifact(view.answer),
                append: false,
                lastChunk: true,
                metadata: undefined,
              },
            },
          },
        ]),
    { payload: { $case: 'statusUpdate', value: { ...ids, status: statusOf(view), metadata: undefined } } },
  ];
}

/**
 * The A2A request handler of one request to one agent, as one person: a context is a channel the person shares with
 * the agent, a task one request of the person in it. It keeps nothing between requests: every answer is read from
 * the channel's log, so any replica answers any request.
 */
export class ChannelTaskHandler implements A2ARequestHandler {
  readonly #o: ChannelTaskHandlerOptions;
  #sessionEnded = false;

  constructor(options: ChannelTaskHandlerOptions) {
    this.#o = options;
  }

  /**
   * Whether a hub call of this request said the hub no longer serves the caller (revoked, unregistered): the
   * person's session is over, and the request is answered as a refusal of the session.
   */
  get sessionEnded(): boolean {
    return this.#sessionEnded;
  }

  getAgentCard(): Promise<AgentCard> {
    return Promise.resolve(this.#o.card);
  }

  /** The card a signed-in caller gets is the public one: every caller sees the same agent. */
  getAuthenticatedExtendedAgentCard(): Promise<AgentCard> {
    return Promise.resolve(this.#o.card);
  }

  sendMessage(params: SendMessageRequest): Promise<Message | Task> {
    return this.#guarded(() => this.#send(params));
  }

  sendMessageStream(params: SendMessageRequest): AsyncGenerator<StreamResponse, void, undefined> {
    return this.#guardedStream(this.#sendStream(params));
  }

  getTask(params: GetTaskRequest): Promise<Task> {
    return this.#guarded(async () => {
      const { view } = await readTask(this.#o.actor, this.#o.parties, params.id);
      return toA2aTask(view, params.historyLength);
    });
  }

  listTasks(params: ListTasksRequest): Promise<ListTasksResponse> {
    return this.#guarded(() => listTasks(this.#o.actor, this.#o.parties, params));
  }

  cancelTask(params: CancelTaskRequest): Promise<Task> {
    return this.#guarded(() => this.#cancel(params));
  }

  resubscribe(params: SubscribeToTaskRequest): AsyncGenerator<StreamResponse, void, undefined> {
    return this.#guardedStream(this.#resubscribe(params));
  }

  async #send(params: SendMessageRequest): Promise<Message | Task> {
    const posted = await this.#post(params);
    const historyLength = params.configuration?.historyLength;
    if (params.configuration?.returnImmediately === true) return toA2aTask(posted.view, historyLength);
    const timeout = AbortSignal.timeout(this.#o.blockingWaitMs);
    const wait = { ...this.#o.wait, signal: AbortSignal.any([this.#o.wait.signal, timeout]) };
    let view = posted.view;
    for await (const envelope of followLog(this.#o.actor, { channelId: view.channelId, since: posted.next, wait })) {
      view = stepTask(view, envelope, this.#o.parties);
      if (isSettled(view.state)) break;
    }
    return toA2aTask(view, historyLength);
  }

  async *#sendStream(params: SendMessageRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const posted = await this.#post(params);
    yield { payload: { $case: 'task', value: toA2aTask(posted.view) } };
    yield* this.#follow(posted.view, posted.next);
  }

  async #cancel(params: CancelTaskRequest): Promise<Task> {
    const read = await readTask(this.#o.actor, this.#o.parties, params.id);
    if (isSettled(read.view.state)) {
      throw new TaskNotCancelableError(`task ${params.id} is ${TaskState[read.view.state]}: it cannot be canceled`);
    }
    if (read.channel.state === ChannelState.Active || read.channel.state === ChannelState.Pending) {
      const human = this.#person();
      await asCaller(params.id, () => human.closeChannel(read.view.channelId, A2A_CANCEL_REASON));
    }
    // The channel's end is in the log once the hub closed it; follow the log to it (the task's state is the log's).
    const wait = {
      ...this.#o.wait,
      signal: AbortSignal.any([this.#o.wait.signal, AbortSignal.timeout(CANCEL_SETTLE_MS)]),
    };
    let view = read.view;
    for await (const envelope of followLog(this.#o.actor, { channelId: view.channelId, since: read.next, wait })) {
      view = stepTask(view, envelope, this.#o.parties);
      if (isSettled(view.state)) break;
    }
    return toA2aTask(view);
  }

  async *#resubscribe(params: SubscribeToTaskRequest): AsyncGenerator<StreamResponse, void, undefined> {
    const read = await readTask(this.#o.actor, this.#o.parties, params.id);
    const state = read.view.state;
    if (state !== TaskState.TASK_STATE_WORKING && state !== TaskState.TASK_STATE_INPUT_REQUIRED) {
      throw new UnsupportedOperationError(
        `task ${params.id} is ${TaskState[state]}, a terminal state: read it with tasks/get instead`,
      );
    }
    yield { payload: { $case: 'task', value: toA2aTask(read.view) } };
    if (!isSettled(state)) yield* this.#follow(read.view, read.next);
  }

  createTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    return Promise.reject(new PushNotificationNotSupportedError('push notifications are not offered: stream instead'));
  }

  getTaskPushNotificationConfig(): Promise<TaskPushNotificationConfig> {
    return Promise.reject(new PushNotificationNotSupportedError('push notifications are not offered'));
  }

  listTaskPushNotificationConfigs(): Promise<ListTaskPushNotificationConfigsResponse> {
    return Promise.reject(new PushNotificationNotSupportedError('push notifications are not offered'));
  }

  deleteTaskPushNotificationConfig(): Promise<void> {
    return Promise.reject(new PushNotificationNotSupportedError('push notifications are not offered'));
  }

  /** Runs `run`, answering a hub refusal as the A2A error it means (`a2aErrorOf`). */
  async #guarded<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw this.#refusal(err);
    }
  }

  /** `stream`, ending with the A2A error a hub refusal means (`a2aErrorOf`). */
  async *#guardedStream<T>(stream: AsyncGenerator<T, void, undefined>): AsyncGenerator<T, void, undefined> {
    try {
      yield* stream;
    } catch (err) {
      throw this.#refusal(err);
    }
  }

  #refusal(err: unknown): unknown {
    if (hubNoLongerServes(err)) this.#sessionEnded = true;
    return a2aErrorOf(err);
  }

  #person(): HumanClient {
    if (this.#o.human === null) throw new AuthError('only a person signed in as themself can do this');
    return this.#o.human;
  }

  /** Follows the log after a task until it settles (or the client leaves): the events of its settling. */
  async *#follow(start: TaskView, since: number): AsyncGenerator<StreamResponse, void, undefined> {
    let view = start;
    for await (const envelope of followLog(this.#o.actor, { channelId: view.channelId, since, wait: this.#o.wait })) {
      view = stepTask(view, envelope, this.#o.parties);
      if (isSettled(view.state)) {
        yield* settledEvents(view);
        return;
      }
    }
  }

  /** Posts the request into its context (a new channel without one): the task it opens, and where its log goes on. */
  async #post(params: SendMessageRequest): Promise<{ view: TaskView; next: number }> {
    const { actor, parties } = this.#o;
    const human = this.#person();
    const message = params.message;
    const content = requestContent(message);
    const taskId = message?.taskId ?? '';
    const contextId = message?.contextId ?? '';
    let channelId: string;
    if (taskId !== '') {
      // A message naming a task continues it only when the agent asked for input; its context goes on either way.
      const read = await readTask(actor, parties, taskId);
      if (contextId !== '' && contextId !== read.view.channelId)
        throw new RequestMalformedError('taskId is of another context');
      if (read.view.state !== TaskState.TASK_STATE_INPUT_REQUIRED) {
        throw new UnsupportedOperationError(
          `task ${taskId} is ${TaskState[read.view.state]}: send the message with its contextId (and no taskId)`,
        );
      }
      channelId = read.view.channelId;
    } else if (contextId !== '') {
      channelId = (await contextChannel(actor, parties, { contextId })).channel_id;
    } else {
      const channel = await human.open({ type: CONTEXT_CHANNEL_TYPE, target: parties.agentId, labels: { via: 'a2a' } });
      channelId = channel.channelId;
    }
    const messageId = message?.messageId ?? '';
    const eventData = { ...content, ...(messageId === '' ? {} : { a2a_message_id: messageId }) };
    const channel = await asCaller(channelId, () => human.getChannel(channelId));
    if (channel.state !== ChannelState.Active) {
      throw new UnsupportedOperationError(
        `context ${channelId} ended (${channel.close_reason || channel.state}): send without a contextId to start another`,
      );
    }
    // A refusal of the post itself (the channel's protocol, a rule) is the hub's to say: `guarded` maps it.
    const ack = await human.sendEnvelope({
      envelope_id: requestEnvelopeId(parties, channelId, messageId),
      channel_id: channelId,
      event_type: EV_TEXT,
      event_data: eventData,
      audience: null,
      causation_id: null,
    });
    const request = EnvelopeSchema.parse({
      channel_id: channelId,
      sender_id: parties.callerId,
      event_type: EV_TEXT,
      event_data: eventData,
      envelope_id: ack.envelope_id,
      created_at: ack.created_at,
      sequence: ack.sequence,
    });
    return { view: openTask(channelId, request), next: ack.sequence + 1 };
  }
}
