import { Role, TaskState, type Artifact, type Message, type Task } from '@a2a-js/sdk';
import {
  ChannelEndDataSchema,
  CloseReason,
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_PACKET,
  EV_TEXT,
  EV_TURN_FAILED,
  PacketDataSchema,
  TurnFailedDataSchema,
  type Envelope,
} from '@ag2net/protocol';
import { a2aPartsOf } from './parts.js';

// An A2A task is one request of the caller in a channel (an `ag2.msg.text` it posted) and what the log says of it
// after: the agent's answer, its failed turn, or the channel's end. Everything here is read from the log, so any
// replica folds the same task from the same envelopes.

/** Separates the channel id and the request's sequence in a task id: ids never hold one. */
const TASK_ID_SEPARATOR = '.';

/** The close reason `tasks/cancel` closes a channel with. */
export const A2A_CANCEL_REASON = 'canceled';

/** Close reasons that mean the caller ended the channel: a task still open then is `canceled`, not `failed`. */
const CALLER_CLOSE_REASONS: ReadonlySet<string> = new Set([
  A2A_CANCEL_REASON,
  CloseReason.HumanClosed,
  CloseReason.ExplicitClose,
]);

/** The id of the task whose request is envelope `sequence` of channel `channelId`. */
export function taskIdOf(channelId: string, sequence: number): string {
  return `${channelId}${TASK_ID_SEPARATOR}${sequence}`;
}

/** The channel and the request's sequence of a task id; `null` for an id this bridge never made. */
export function parseTaskId(taskId: string): { channelId: string; sequence: number } | null {
  const at = taskId.lastIndexOf(TASK_ID_SEPARATOR);
  if (at <= 0) return null;
  const channelId = taskId.slice(0, at);
  const sequence = taskId.slice(at + 1);
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(channelId) || !/^[1-9]\d{0,14}$/.test(sequence)) return null;
  return { channelId, sequence: Number(sequence) };
}

/** Who a task is between: the caller (who posted the request) and the agent it asked. */
export interface TaskParties {
  readonly callerId: string;
  readonly agentId: string;
  readonly agentName: string;
}

/** What the log says of one request so far. */
export interface TaskView {
  readonly channelId: string;
  readonly state: TaskState;
  /** The caller's `ag2.msg.text`. */
  readonly request: Envelope;
  /** The agent's answer (a text or a packet), once there. */
  readonly answer: Envelope | null;
  /** The envelope that decided the state: the answer, the failed turn or the channel's end; `null` while working. */
  readonly decidedBy: Envelope | null;
  /** Why a task failed or was canceled: the failed turn's reason or the close reason. */
  readonly reason: string | null;
}

/** States after which nothing in the log changes the task (A2A's terminal and interrupted states). */
export function isSettled(state: TaskState): boolean {
  return state !== TaskState.TASK_STATE_WORKING && state !== TaskState.TASK_STATE_SUBMITTED;
}

/** A task whose request was just read: `working` until a later envelope says otherwise. */
export function openTask(channelId: string, request: Envelope): TaskView {
  return { channelId, state: TaskState.TASK_STATE_WORKING, request, answer: null, decidedBy: null, reason: null };
}

function answers(envelope: Envelope, view: TaskView): boolean {
  // Agents set causation_id to the trigger; an answer without one is taken as the answer to the oldest open request.
  return envelope.causation_id === view.request.envelope_id || envelope.causation_id === null;
}

/** Whether a packet hands the turn back to the caller: the agent waits for the caller's input. */
function handsBackTo(envelope: Envelope, parties: TaskParties): boolean {
  const packet = PacketDataSchema.safeParse(envelope.event_data);
  const routing = packet.success ? packet.data.routing : undefined;
  return routing?.kind === 'handoff' && routing.target === parties.callerId;
}

/** The task after one more envelope of the log (read after the request, in order). */
export function stepTask(view: TaskView, envelope: Envelope, parties: TaskParties): TaskView {
  if (isSettled(view.state)) return view;
  const fromAgent = envelope.sender_id === parties.agentId;
  if (fromAgent && (envelope.event_type === EV_TEXT || envelope.event_type === EV_PACKET) && answers(envelope, view)) {
    const state = handsBackTo(envelope, parties) ? TaskState.TASK_STATE_INPUT_REQUIRED : TaskState.TASK_STATE_COMPLETED;
    return { ...view, state, answer: envelope, decidedBy: envelope };
  }
  if (fromAgent && envelope.event_type === EV_TURN_FAILED && answers(envelope, view)) {
    const failed = TurnFailedDataSchema.safeParse(envelope.event_data);
    const reason = failed.success ? failed.data.reason : 'the turn failed';
    return { ...view, state: TaskState.TASK_STATE_FAILED, decidedBy: envelope, reason };
  }
  if (envelope.event_type === EV_CHANNEL_CLOSED || envelope.event_type === EV_CHANNEL_EXPIRED) {
    const end = ChannelEndDataSchema.safeParse(envelope.event_data);
    const reason = end.success ? end.data.reason : CloseReason.ExplicitClose;
    const canceled = envelope.event_type === EV_CHANNEL_CLOSED && CALLER_CLOSE_REASONS.has(reason);
    const state = canceled ? TaskState.TASK_STATE_CANCELED : TaskState.TASK_STATE_FAILED;
    return { ...view, state, decidedBy: envelope, reason };
  }
  return view;
}

/** The `messageId` the client gave its message (kept in the request's `event_data`), else the envelope id. */
function messageIdOf(envelope: Envelope): string {
  const given = envelope.event_data['a2a_message_id'];
  return typeof given === 'string' && given !== '' ? given : envelope.envelope_id;
}

function messageOf(envelope: Envelope, options: { role: Role; taskId: string; text?: string }): Message {
  return {
    messageId: options.role === Role.ROLE_USER ? messageIdOf(envelope) : envelope.envelope_id,
    contextId: envelope.channel_id,
    taskId: options.taskId,
    role: options.role,
    parts: a2aPartsOf(envelope, options.text),
    metadata: { ag2net: { envelope_id: envelope.envelope_id, sequence: envelope.sequence ?? null } },
    extensions: [],
    referenceTaskIds: [],
  };
}

/** The answer as the task's one artifact. */
export function answerArtifact(answer: Envelope): Artifact {
  return {
    artifactId: answer.envelope_id,
    name: 'answer',
    description: '',
    parts: a2aPartsOf(answer),
    metadata: undefined,
    extensions: [],
  };
}

/** The task's status: its state, with the answer (or why it failed or was canceled) as the status message. */
export function statusOf(view: TaskView): NonNullable<Task['status']> {
  const taskId = taskIdOf(view.channelId, view.request.sequence ?? 0);
  const at = view.decidedBy ?? view.request;
  const message =
    view.answer !== null
      ? messageOf(view.answer, { role: Role.ROLE_AGENT, taskId })
      : view.reason !== null && view.decidedBy !== null
        ? messageOf(view.decidedBy, { role: Role.ROLE_AGENT, taskId, text: view.reason })
        : undefined;
  return { state: view.state, message, timestamp: at.created_at === '' ? undefined : at.created_at };
}

/**
 * The A2A task of a view: its history is the request and the answer (the last `historyLength` of them when given, none
 * for 0), its one artifact the answer.
 */
export function toA2aTask(view: TaskView, historyLength?: number): Task {
  const taskId = taskIdOf(view.channelId, view.request.sequence ?? 0);
  const history = [
    messageOf(view.request, { role: Role.ROLE_USER, taskId }),
    ...(view.answer === null ? [] : [messageOf(view.answer, { role: Role.ROLE_AGENT, taskId })]),
  ];
  return {
    id: taskId,
    contextId: view.channelId,
    status: statusOf(view),
    artifacts: view.answer === null ? [] : [answerArtifact(view.answer)],
    history: historyLength === undefined ? history : historyLength <= 0 ? [] : history.slice(-historyLength),
    metadata: {
      ag2net: {
        channel_id: view.channelId,
        request_sequence: view.request.sequence ?? null,
        ...(view.reason === null ? {} : { reason: view.reason }),
      },
    },
  };
}

/** Whether an envelope is a request of the caller: a text it posted. */
export function isRequestOf(envelope: Envelope, callerId: string): boolean {
  return envelope.sender_id === callerId && envelope.event_type === EV_TEXT;
}
