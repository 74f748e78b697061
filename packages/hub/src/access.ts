import {
  Access,
  AccessDeniedError,
  CallerSchema,
  HUB_OPS,
  InvalidRequestError,
  OPERATOR_CALLER,
  repr,
  visibleTo,
  type Envelope,
  type HubOp,
} from '@ag2net/protocol';
import { channelNotFound } from './core/channel-table.js';
import type { HubContext } from './core/context.js';

/** What the access rules need to know about the hub: who is registered, and each channel's participants. */
export interface AccessDirectory {
  /** True when `agentId` is a registered identity. */
  isRegistered(agentId: string): boolean;
  /** The channel's participants (its metadata will do), or `undefined` for an unknown channel. */
  channel(channelId: string): { readonly participants: readonly { readonly agent_id: string }[] } | undefined;
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
export function accessDirectory(ctx: Pick<HubContext, 'registry' | 'channels'>): AccessDirectory {
  return {
    isRegistered: (agentId) => ctx.registry.get(agentId) !== undefined,
    channel: (channelId) => ctx.channels.get(channelId)?.metadata,
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
 * How each participant operation answers a registered identity that is not a participant of the request's channel.
 * `hidden`: a read answers exactly as for a channel that does not exist, so that no read tells a channel one is not
 * in from no channel at all. `refused`: an act on the channel is refused with `access_denied`. A new participant
 * operation must be listed here.
 */
const NON_MEMBER: { readonly [Op in ParticipantOp]: 'hidden' | 'refused' } = {
  getChannel: 'hidden',
  readWal: 'hidden',
  findEnvelopeByCausation: 'hidden',
  canSend: 'hidden',
  adapterState: 'hidden',
  closeChannel: 'refused',
  post: 'refused',
  reportTurnFailure: 'refused',
  acquireTurnLock: 'refused',
  renewTurnLock: 'refused',
  releaseTurnLock: 'refused',
};

/** `NON_MEMBER` by any op name; an op outside the participant class is never asked, and would be refused. */
const nonMemberAnswers: Partial<Record<HubOp, 'hidden' | 'refused'>> = NON_MEMBER;

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
    if (channel.participants.some((p) => p.agent_id === caller)) return;
    if (nonMemberAnswers[op] === 'hidden') throw channelNotFound(channelId);
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
 *   the acts on a channel (`post`, `closeChannel`, turn locks, `reportTurnFailure`) refuse a non-member.
 * - `operator`: `OPERATOR_CALLER` only.
 * Refusals are `access_denied` with a short message that names nothing the caller did not send.
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
