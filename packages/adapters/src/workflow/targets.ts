import { repr } from '@ag2net/protocol/internal';
import { type Envelope, CloseReason } from '@ag2net/protocol';
import { z } from 'zod';
import { parseOrThrow } from './errors.js';
import type { TransitionDecision, TransitionTarget, WorkflowState } from './types.js';

const NoArgsSchema = z.strictObject({});

function argsOf<T extends z.ZodType>(schema: T, args: unknown, name: string): z.output<T> {
  return parseOrThrow(schema, args, `args for transition target ${repr(name)}`);
}

function decide(nextSpeaker: string | null, closeReason = ''): TransitionDecision {
  return { nextSpeaker, closeReason };
}

const AgentArgsSchema = z.strictObject({ agent_id: z.string() });

/** `agent`: hand the turn to `agentId`. */
export class AgentTarget implements TransitionTarget {
  readonly name = 'agent';
  constructor(readonly agentId: string) {}

  static fromArgs(args: Readonly<Record<string, unknown>>): AgentTarget {
    return new AgentTarget(argsOf(AgentArgsSchema, args, 'agent').agent_id);
  }

  args(): Record<string, unknown> {
    return { agent_id: this.agentId };
  }

  resolve(): TransitionDecision {
    return decide(this.agentId);
  }
}

/**
 * `round_robin`: the participant after the last speaker (or, before anyone spoke, after the sender) in
 * `participant_order`, wrapping around; `order[0]` when that agent is not a participant; ends the workflow with
 * `no_participants` when the order is empty.
 */
export class RoundRobinTarget implements TransitionTarget {
  readonly name = 'round_robin';

  static fromArgs(args: Readonly<Record<string, unknown>>): RoundRobinTarget {
    argsOf(NoArgsSchema, args, 'round_robin');
    return new RoundRobinTarget();
  }

  args(): Record<string, unknown> {
    return {};
  }

  resolve(state: WorkflowState, envelope: Envelope): TransitionDecision {
    const order = state.participant_order;
    const first = order[0];
    if (first === undefined) return decide(null, CloseReason.NoParticipants);
    const anchor = state.last_speaker_id || envelope.sender_id;
    const index = order.indexOf(anchor);
    return decide(index === -1 ? first : (order[(index + 1) % order.length] ?? first));
  }
}

/** `stay`: the same speaker again (the last speaker, else the sender). */
export class StayTarget implements TransitionTarget {
  readonly name = 'stay';

  static fromArgs(args: Readonly<Record<string, unknown>>): StayTarget {
    argsOf(NoArgsSchema, args, 'stay');
    return new StayTarget();
  }

  args(): Record<string, unknown> {
    return {};
  }

  resolve(state: WorkflowState, envelope: Envelope): TransitionDecision {
    return decide(state.last_speaker_id || envelope.sender_id);
  }
}

/** `revert_to_initiator`: back to the channel creator. */
export class RevertToInitiatorTarget implements TransitionTarget {
  readonly name = 'revert_to_initiator';

  static fromArgs(args: Readonly<Record<string, unknown>>): RevertToInitiatorTarget {
    argsOf(NoArgsSchema, args, 'revert_to_initiator');
    return new RevertToInitiatorTarget();
  }

  args(): Record<string, unknown> {
    return {};
  }

  resolve(state: WorkflowState): TransitionDecision {
    return decide(state.creator_id);
  }
}

const TerminateArgsSchema = z.strictObject({ reason: z.string().default(CloseReason.AfterWork) });

/** `terminate`: end the workflow; `reason` (default `after_work`) becomes the channel's close reason. */
export class TerminateTarget implements TransitionTarget {
  readonly name = 'terminate';
  constructor(readonly reason: string = CloseReason.AfterWork) {}

  static fromArgs(args: Readonly<Record<string, unknown>>): TerminateTarget {
    return new TerminateTarget(argsOf(TerminateArgsSchema, args, 'terminate').reason);
  }

  args(): Record<string, unknown> {
    return { reason: this.reason };
  }

  resolve(): TransitionDecision {
    return decide(null, this.reason);
  }
}
