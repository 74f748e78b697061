/**
 * The reasons the project writes when a channel ends: `close_reason` of its metadata, `reason` of its
 * `ag2.channel.closed` / `ag2.channel.expired` envelope and of its `channel_closed` / `channel_expired` audit record.
 * The set is open: a participant's `closeChannel` and a workflow's terminate target name their own reason.
 */
export const CloseReason = {
  /** `closeChannel` without a reason. */
  ExplicitClose: 'explicit_close',
  /** A person's `closeChannel` without a reason (the human client's default). */
  HumanClosed: 'human_closed',
  /** An agent closed the channel with its close-channel tool. */
  ClosedByAgent: 'closed_by_agent',
  /** An agent opened a channel but could not post its first message, and closed it again. */
  SeedFailed: 'seed_failed',
  /** The adapter ended the channel without naming a reason. */
  ClosedByAdapter: 'closed_by_adapter',
  /** A consulting channel after its reply. */
  ConsultingComplete: 'consulting_complete',
  /** The participant whose turn it was posted `ag2.turn.failed`. */
  TurnFailed: 'turn_failed',
  /** A workflow's graph ended it without a reason. */
  WorkflowTerminated: 'workflow_terminated',
  /** A workflow reached its `max_turns` knob. */
  MaxTurns: 'max_turns',
  /** A workflow packet's `finish` routing without a reason. */
  Finished: 'finished',
  /** AG2's default reason of a workflow terminate target. */
  AfterWork: 'after_work',
  /** A workflow round-robin target found no participant to hand to. */
  NoParticipants: 'no_participants',
  /** The terminate reason of the `roundRobin` graph factory. */
  RoundRobinComplete: 'round_robin_complete',
  /** The terminate reason of the `sequence` graph factory. */
  SequenceComplete: 'sequence_complete',
  /** An invitee declined with `ag2.channel.invite.reject`. */
  InviteRejected: 'invite_rejected',
  /** Not every invitee acked within the hub's ack timeout. */
  InviteTimeout: 'invite_timeout',
  /** The hub could not append an invite to the channel's log. */
  InviteFailed: 'invite_failed',
  /** The channel passed its `expires_at`; it ends `expired`, not `closed`. */
  TtlExpired: 'ttl_expired',
} as const;
export type CloseReason = (typeof CloseReason)[keyof typeof CloseReason];

/** What every `auto_close` reason begins with; the expectation's name follows. */
export const EXPECTATION_VIOLATED_REASON_PREFIX = 'expectation_violated:';

/** The close reason of an `auto_close` violation of expectation `name`: `expectation_violated:<name>`. */
export function expectationViolatedReason(name: string): string {
  return `${EXPECTATION_VIOLATED_REASON_PREFIX}${name}`;
}

/** The reasons the hub writes when it ends a task itself (`error` of the task, `reason` of `task_terminated`). */
export const TaskEndReason = {
  /** The task passed its `expires_at`. */
  TtlExpired: 'ttl_expired',
  /** The task's channel ended while the task was open. */
  ChannelClosed: 'channel_closed',
} as const;
export type TaskEndReason = (typeof TaskEndReason)[keyof typeof TaskEndReason];
