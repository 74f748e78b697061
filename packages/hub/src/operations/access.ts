import type { AdapterState, HubAdapter } from '@ag2net/adapters';
import { Access, CallerSchema, repr } from '@ag2net/protocol/internal';
import {
  AccessDeniedError,
  AuthError,
  ChannelState,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  EV_EXPECTATION_VIOLATED,
  EnvelopeSchema,
  HUB_OPS,
  InvalidRequestError,
  OPERATOR_CALLER,
  ProtocolError,
  isChannelProtocolEvent,
  isTerminalChannelState,
  visibleTo,
  type ChannelMetadata,
  type Envelope,
  type HubOp,
  type TaskMetadata,
} from '@ag2net/protocol';
import { nonParticipantRefusal } from './admission.js';
import { channelNotFound } from '../stores/channel-table.js';
import type { HomeStores } from '../partition/hub-parts.js';
import type { PartitionPick } from '../partition/partition.js';
import { isPeerCancelRequest } from './peer-cancel.js';

/**
 * What the access rules need to know of a channel: its metadata (participants, state), and its adapter and adapter
 * state, with which a post from outside the channel is refused in the adapter's words (a channel runtime will do).
 */
export interface AccessChannel {
  readonly metadata: ChannelMetadata;
  /** `null` when no adapter is registered for the channel's manifest. */
  readonly adapter: HubAdapter | null;
  /** `null` without an adapter, and for an ended channel whose state is not in memory. */
  readonly state: AdapterState | null;
}

/** What the access rules need to know about the hub: who is registered, and each channel. */
export interface AccessDirectory {
  /** True when `agentId` is a registered identity. */
  isRegistered(agentId: string): boolean;
  /** The channel, or `undefined` for an unknown channel. */
  channel(channelId: string): AccessChannel | undefined;
  /** The task, or `undefined` for an unknown one (a peer's cancel request names one). */
  task(taskId: string): TaskMetadata | undefined;
}

/** One request as the access rules see it. */
export interface Call {
  readonly op: HubOp;
  /** The caller token of the subject (`''` for operations without one). */
  readonly caller: string;
  /** The parsed request. */
  readonly request: unknown;
}

/** The directory of a hub: who is registered and who takes part in which channel, as the hub knows it now. */
export function accessDirectory(
  ctx: Pick<HomeStores, 'registry' | 'tasks'> & PartitionPick<'channels'>,
): AccessDirectory {
  return {
    isRegistered: (agentId) => ctx.registry.get(agentId) !== undefined,
    channel: (channelId) => ctx.partition.channels.get(channelId),
    task: (taskId) => ctx.tasks.get(taskId),
  };
}

/** The message every refused non-operator caller of an operator op gets. */
const OPERATOR_ONLY = 'operator only';

/**
 * The caller a handler acts for, once `authorize` let it through: `''` for public operations, `OPERATOR_CALLER`,
 * or the id of a registered identity (a participant of the request's channel, for participant operations).
 */
export type CheckedCaller = string;

/** The caller token of an RPC subject (its last token), parsed with `CallerSchema`; `invalid_request` otherwise. */
export function callerOf(subject: string): string {
  const token = subject.slice(subject.lastIndexOf('.') + 1);
  const parsed = CallerSchema.safeParse(token);
  if (!parsed.success) throw new InvalidRequestError(`caller in subject is invalid: ${repr(token)}`);
  return parsed.data;
}

/** The request's `channel_id`, for participant operations (every one of them has it in its schema). */
function channelIdOf({ op, request }: Call): string {
  const id: unknown = typeof request === 'object' && request !== null ? Reflect.get(request, 'channel_id') : undefined;
  // Unreachable with the op table as it is; a participant op without `channel_id` is a bug, never let through.
  if (typeof id !== 'string') throw new InvalidRequestError(`${op} names no channel`);
  return id;
}

/** Refuses a caller that is not a registered identity: the same short message whether or not it ever existed. */
function requireRegistered(caller: string, directory: AccessDirectory): void {
  if (!directory.isRegistered(caller)) throw new AccessDeniedError(`unknown caller ${repr(caller)}`);
}

/** The operations of the `participant` class. */
type ParticipantOp = {
  [Op in HubOp]: (typeof HUB_OPS)[Op]['access'] extends typeof Access.Participant ? Op : never;
}[HubOp];

/**
 * How a participant operation answers a registered identity that is not a participant of the request's channel:
 * - `hidden`: a read answers exactly as for a channel that does not exist, so that no read tells a channel one is
 *   not in from no channel at all;
 * - `refused`: an act on the channel is refused with `access_denied` (AG2 refuses a non-participant's
 *   `close_channel` and `report_turn_failure` with `AccessDeniedError` too);
 * - `ag2`: a post is refused with the `protocol_error` AG2 answers a send from outside the channel with
 *   (`nonParticipantSend`), never admitted.
 * A new participant operation must be listed here.
 */
type NonMemberAnswer = 'hidden' | 'refused' | 'ag2';

const NON_MEMBER: { readonly [Op in ParticipantOp]: NonMemberAnswer } = {
  getChannel: 'hidden',
  readWal: 'hidden',
  findEnvelopeByCausation: 'hidden',
  canSend: 'hidden',
  adapterState: 'hidden',
  closeChannel: 'refused',
  post: 'ag2',
  reportTurnFailure: 'refused',
  acquireTurnLock: 'refused',
  renewTurnLock: 'refused',
  releaseTurnLock: 'refused',
};

/** `NON_MEMBER` by any op name; an op outside the participant class is never asked, and would be refused. */
const nonMemberAnswers: Partial<Record<HubOp, NonMemberAnswer>> = NON_MEMBER;

/**
 * The error AG2 answers a post by `caller` with, `caller` being no participant of `channel`, in the order of AG2's
 * admission (docs/ag2-compatibility.md): a body whose `sender_id` is not the caller is `auth_failed`, as for anyone;
 * an ended channel is `channel '<id>' is <state>`; an event only the hub writes is refused as from anyone; any other
 * event but an invite answer on a channel that is not active is `channel '<id>' not active (state=<state>)`; then the
 * adapter's own refusal of the sender (`conversation channel '<id>' only accepts sends from participants, got …`,
 * `consulting channel '<id>' expects first send from initiator …`, `discussion channel '<id>' expects … to speak,
 * got …`, `workflow '<id>' expects … to speak, got …`); and where the adapter has none (an event it does not judge),
 * AG2 1.2.1's `channel '<id>' only accepts sends from participants, got '<caller>'`. Nothing is looked up but the
 * channel itself: the post is never admitted, and no envelope id, task or inbox of the channel is consulted.
 */
function nonParticipantSend(channel: AccessChannel, caller: string, request: unknown): Error {
  const parsed = EnvelopeSchema.safeParse(request);
  // Unreachable: `post` requests are parsed with this schema before `authorize`; never let one through unparsed.
  if (!parsed.success) return new InvalidRequestError('post names no envelope');
  const envelope = parsed.data;
  if (envelope.sender_id !== caller) {
    return new AuthError(`sender_id ${repr(envelope.sender_id)} does not match the caller ${repr(caller)}`);
  }
  const { metadata } = channel;
  const cid = repr(metadata.channel_id);
  if (isTerminalChannelState(metadata.state)) return new ProtocolError(`channel ${cid} is ${metadata.state}`);
  const type = envelope.event_type;
  const inviteAnswer = type === EV_CHANNEL_INVITE_ACK || type === EV_CHANNEL_INVITE_REJECT;
  if (!inviteAnswer) {
    if (isChannelProtocolEvent(type) || type === EV_EXPECTATION_VIOLATED) {
      return new ProtocolError(`${type} events are written by the hub`);
    }
    if (metadata.state !== ChannelState.Active) {
      return new ProtocolError(`channel ${cid} not active (state=${metadata.state})`);
    }
    return nonParticipantRefusal(channel, envelope);
  }
  return new ProtocolError(`channel ${cid} only accepts sends from participants, got ${repr(caller)}`);
}

/** True when a non-member's post is a peer's cancel request (`isPeerCancelRequest`) sent as itself. */
function isPeerCancelPost(channel: AccessChannel, request: unknown, dir: AccessDirectory): boolean {
  const parsed = EnvelopeSchema.safeParse(request);
  if (!parsed.success) return false;
  const envelope = parsed.data;
  const task = envelope.task_id === null ? undefined : dir.task(envelope.task_id);
  return isPeerCancelRequest(envelope, channel.metadata, task);
}

/**
 * The rule of each access class, applied after the operator rule (see `authorize`). Each throws to refuse.
 * `caller` is never `OPERATOR_CALLER` for `self` and `participant` here: an operator that reached them is allowed.
 */
const RULES: { readonly [A in Access]: (call: Call, dir: AccessDirectory) => void } = {
  [Access.Public]: () => undefined,
  [Access.Self]: ({ caller }, dir) => requireRegistered(caller, dir),
  [Access.Participant]: (call, dir) => {
    const { caller, op } = call;
    requireRegistered(caller, dir);
    const channelId = channelIdOf(call);
    const channel = dir.channel(channelId);
    if (channel === undefined) throw channelNotFound(channelId);
    if (channel.metadata.participants.some((p) => p.agent_id === caller)) return;
    // AG2 1.2.1's one exception: a peer's cancel request for a task of the channel (admission checks it once more).
    if (op === 'post' && isPeerCancelPost(channel, call.request, dir)) return;
    const answer = nonMemberAnswers[op];
    if (answer === 'hidden') throw channelNotFound(channelId);
    // AG2's words, which name the channel's type and state and, for a turn-taking channel, whose turn it is.
    if (answer === 'ag2') throw nonParticipantSend(channel, caller, call.request);
    // Echoes only what the caller sent: a non-member learns that it is not a member, and nothing else.
    throw new AccessDeniedError(`${repr(caller)} is not a participant of channel ${repr(channelId)}`);
  },
  [Access.Operator]: ({ caller }) => {
    if (caller !== OPERATOR_CALLER) throw new AccessDeniedError(OPERATOR_ONLY);
  },
};

/**
 * The one place where the hub decides whether a caller may run an operation, by `HUB_OPS[op].access` and
 * `operatorReads`, before the handler runs:
 * - `public`: anyone (the subject carries no caller; `caller` is `''`).
 * - `OPERATOR_CALLER` is refused on every operation whose `operatorReads` is false, and allowed on every other one
 *   (an unknown channel is still `not_found`).
 * - `self`: a registered identity.
 * - `participant`: a registered identity among the participants of the request's `channel_id`; an unknown channel
 *   is `not_found` for everyone alike, and so is a channel the caller is not in for the reads of a channel (`getChannel`,
 *   `readWal`, `findEnvelopeByCausation`, `canSend`, `adapterState`), which answer it exactly like an unknown one;
 *   the acts on a channel (`closeChannel`, turn locks, `reportTurnFailure`) refuse a non-member with `access_denied`,
 *   and a non-member's `post` gets the `protocol_error` AG2 answers it with (`nonParticipantSend`).
 * - `operator`: `OPERATOR_CALLER` only.
 * Other refusals are `access_denied` with a short message that names nothing the caller did not send.
 */
export function authorize(call: Call, directory: AccessDirectory): CheckedCaller {
  const { op, caller } = call;
  const spec = HUB_OPS[op];
  if (spec.access === Access.Public) return '';
  if (caller === OPERATOR_CALLER) {
    if (!spec.operatorReads) throw new AccessDeniedError(`${op} is not an operator operation`);
    if (spec.access === Access.Participant) {
      const channelId = channelIdOf(call);
      if (directory.channel(channelId) === undefined) throw channelNotFound(channelId);
    }
    return caller;
  }
  RULES[spec.access](call, directory);
  return caller;
}

/** True when `caller` is the operator, who reads everything. */
export function isOperator(caller: string): boolean {
  return caller === OPERATOR_CALLER;
}

/** Whether `caller` may see `envelope`: the operator sees every envelope, anyone else only those addressed to it. */
export function mayRead(caller: string, envelope: Pick<Envelope, 'sender_id' | 'audience'>): boolean {
  return isOperator(caller) || visibleTo(envelope, caller);
}
