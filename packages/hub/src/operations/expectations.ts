import {
  ChannelState,
  EV_EXPECTATION_VIOLATED,
  createEnvelope,
  isParticipant,
  participantIds,
  type Envelope,
  type Expectation,
  ViolationHandlerName,
  expectationViolatedReason,
  type ViolationRecord,
} from '@ag2net/protocol';
import type { ChannelRuntime } from '../stores/channel-runtime.js';
import { appendLocked, beginCloseLocked, type CloseDeps } from './lifecycle.js';
import { channelFields, channelLabel } from '../base/log-names.js';
import type { Violation } from '../governance/evaluators.js';
import { runUserHandler, type FiredViolation, type ViolationHandler } from '../governance/violation-handlers.js';
import { firedKey } from '../governance/violation-record.js';
import type { HubEnv, HubPolicies } from '../partition/hub-parts.js';

/** What evaluating a channel's expectations and firing their violations uses. */
export type ExpectationDeps = CloseDeps & Pick<HubPolicies, 'expectations'>;

/** A violation that has not fired yet, narrowed to its new violators. */
interface Due {
  readonly index: number;
  readonly expectation: Expectation;
  readonly handler: ViolationHandler;
  readonly violation: Violation;
}

/** Whether a sweep at `nowMs` would fire anything in the channel. Pure; lets the sweep skip the channel's lock. */
export function expectationsDue(
  ctx: Pick<HubEnv, 'logger'> & Pick<HubPolicies, 'expectations'>,
  rt: ChannelRuntime,
  nowMs: number,
): boolean {
  return rt.metadata.manifest.expectations.some(
    (expectation, index) => dueViolation(ctx, rt, { index, expectation, nowMs }) !== null,
  );
}

/**
 * Evaluates the channel's expectations in manifest order and fires each violation not fired before: appends its
 * record to the channel's log (the commit point: hydrate rebuilds the fired set from it, so a standby never fires it
 * again), then runs the handler. An `auto_close` stops the evaluation of the channel, as in AG2. Locked.
 */
export async function evaluateExpectationsLocked(
  ctx: ExpectationDeps,
  rt: ChannelRuntime,
  nowMs: number,
): Promise<void> {
  for (const [index, expectation] of rt.metadata.manifest.expectations.entries()) {
    const state = rt.metadata.state;
    if (state !== ChannelState.Pending && state !== ChannelState.Active) return;
    const due = dueViolation(ctx, rt, { index, expectation, nowMs });
    if (due === null) continue;
    const record = await appendLocked(ctx, rt, { draft: recordEnvelope(rt, due) });
    ctx.logger.info(
      {
        ...channelFields(rt.metadata),
        expectation: expectation.name,
        onViolation: expectation.on_violation,
        violators: due.violation.violators,
      },
      'expectation violated',
    );
    await runHandler(ctx, rt, { due, record });
    if (due.handler.name === ViolationHandlerName.AutoClose) return;
  }
}

/** The violation of expectation `index` at `nowMs` with only its unfired violators, or `null`. */
function dueViolation(
  ctx: Pick<HubEnv, 'logger'> & Pick<HubPolicies, 'expectations'>,
  rt: ChannelRuntime,
  at: { readonly index: number; readonly expectation: Expectation; readonly nowMs: number },
): Due | null {
  const { index, expectation, nowMs } = at;
  const evaluator = ctx.expectations.evaluators.get(expectation.name);
  const handler = ctx.expectations.handlers.get(expectation.on_violation);
  // AG2: an unknown evaluator or handler is skipped silently (no audit record either).
  if (evaluator === undefined || handler === undefined) return null;
  let violation: Violation | null;
  try {
    violation = evaluator.evaluate(expectation, { metadata: rt.metadata, state: rt.state, facts: rt.facts, nowMs });
  } catch (err) {
    ctx.logger.warn({ err, ...channelFields(rt.metadata), expectation: expectation.name }, 'evaluator failed');
    return null;
  }
  if (violation === null) return null;
  const scope = violation.scope ?? '';
  const of = { index, expectation: expectation.name, scope };
  const unfired = (who: string) => !rt.facts.fired.has(firedKey(of, who));
  if (violation.violators.length === 0) {
    return unfired('') ? { index, expectation, handler, violation: { ...violation, scope } } : null;
  }
  const fresh = violation.violators.filter(unfired);
  if (fresh.length === 0) return null;
  return { index, expectation, handler, violation: { ...violation, violators: fresh, scope } };
}

/** The hub's record of a violation, in the creator's name (as AG2's notify handler posts it). */
function recordEnvelope(rt: ChannelRuntime, due: Due): Envelope {
  const { violation, expectation, handler } = due;
  const data: ViolationRecord = {
    expectation: expectation.name,
    violators: [...violation.violators],
    detail: { ...violation.detail },
    on_violation: handler.name,
    params: { ...expectation.params },
    expectation_index: due.index,
    scope: violation.scope ?? '',
  };
  const record = createEnvelope({
    channel_id: rt.metadata.channel_id,
    sender_id: rt.metadata.creator_id,
    audience: audienceOf(rt, handler, violation),
    event_type: EV_EXPECTATION_VIOLATED,
    event_data: data,
  });
  return handler.name === ViolationHandlerName.Hide ? toNextSpeaker(rt, record) : record;
}

/**
 * A `hide` record that passes the turn also reaches the participant it passes it to: its agent has nothing else to
 * learn from that it is expected now (its client then takes the turn on its trigger).
 */
function toNextSpeaker(rt: ChannelRuntime, record: Envelope): Envelope {
  if (rt.adapter === null || rt.state === null || record.audience === null) return record;
  const next = rt.adapter.expectedNext(rt.metadata, rt.adapter.fold(record, rt.state))?.agentId;
  if (next === undefined || record.audience.includes(next) || !isParticipant(rt.metadata, next)) return record;
  return { ...record, audience: [...record.audience, next] };
}

/**
 * Who the record is delivered to. Like the hub's other notices (opened, closed) it is addressed explicitly, so the
 * creator, in whose name it is written, gets it too.
 */
function audienceOf(rt: ChannelRuntime, handler: ViolationHandler, violation: Violation): string[] {
  switch (handler.notify) {
    case 'nobody':
      return [];
    case 'channel':
      return participantIds(rt.metadata);
    case 'violators':
      // A channel-wide violation has no violators: everyone is told.
      return violation.violators.length === 0
        ? participantIds(rt.metadata)
        : violation.violators.filter((id) => isParticipant(rt.metadata, id));
    default: {
      const unknown: never = handler.notify;
      throw new TypeError(`unknown notice ${String(unknown)}`);
    }
  }
}

/** Runs the handler of a violation whose `record` was just appended. */
async function runHandler(
  ctx: CloseDeps,
  rt: ChannelRuntime,
  recorded: { readonly due: Due; readonly record: Envelope },
): Promise<void> {
  const { due, record } = recorded;
  const { expectation, handler, violation } = due;
  if (handler.name === ViolationHandlerName.AutoClose) {
    await beginCloseLocked(ctx, rt, expectationViolatedReason(expectation.name));
    return;
  }
  if (handler.handle === undefined) return;
  const fired: FiredViolation = {
    channel_id: rt.metadata.channel_id,
    expectation: expectation.name,
    on_violation: handler.name,
    violators: violation.violators,
    detail: violation.detail,
    envelope_id: record.envelope_id,
  };
  // Detached: the channel's lock is released while a user handler runs, so a slow or hung one never blocks it. Its
  // failure line names the channel by its label too (the child's binding) beside `channelId`.
  const logger = ctx.logger.child({ channel: channelLabel(rt.metadata) });
  void runUserHandler({ logger, audit: ctx.audit }, handler, fired);
}
