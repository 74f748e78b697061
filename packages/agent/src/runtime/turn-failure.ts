import { isTransientTurnFailure, type AgentClient, type Logger, type TurnFailedListener } from '@ag2net/client';
import { EV_TURN_FAILED, NetworkError, type Envelope, type TurnFailedData } from '@ag2net/protocol';
import { RetryError } from 'ai';
import { FailureKind, causeLine, excTypeOf, modelErrorCause, withMessage, type FailureCause } from '../model/cause.js';
import { ModelCallError, ModelFailureCode, describeModelError } from '../model/limits.js';
import { scrubSecrets } from '../model/scrub.js';
import { channelLabel } from './turn-observer.js';

/** `code` of an `ag2.turn.failed` whose cause is not the model (the hub, an adapter, a tool outside the model). */
export const TURN_ERROR_CODE = 'turn_error';

/** Why a turn failed, as `ag2.turn.failed` and the runner's log line say it. */
export interface TurnFailure {
  /** Stable, for programs: a `ModelFailureCode`, or `turn_error`. */
  readonly code: string;
  /** One short sentence for people. */
  readonly reason: string;
  /** What the turn met (see `FailureCause`); absent when nothing more than `reason` is known. */
  readonly cause?: FailureCause;
  /** How many times the model was called before it gave up. */
  readonly attempts?: number;
  /** The model that failed, as a passport names it. */
  readonly model?: { readonly provider: string; readonly model: string };
}

/**
 * Why a turn failed, as `ag2.turn.failed` says it: a model failure by its `ModelCallError` code, sentence, cause,
 * attempts and model; a hub error by its wire code; anything else by its error name and message. Every text is
 * scrubbed of what looks like a key, a token or URL credentials; a provider's message that may quote the request is
 * left out (a `ModelCallError` has already dropped one that does).
 */
export function describeTurnFailure(err: unknown): TurnFailure {
  // The AI SDK's own retries (of a model not built by `createModel`) end in a RetryError around the last failure.
  const failed = RetryError.isInstance(err) && err.lastError !== undefined ? err.lastError : err;
  const tries = RetryError.isInstance(err) ? { attempts: Math.max(1, err.errors.length) } : {};
  const model = describeModelError(failed, tries.attempts);
  if (failed instanceof ModelCallError) {
    return {
      code: failed.code,
      reason: failed.reason,
      ...(failed.detail === null ? {} : { cause: failed.detail }),
      attempts: failed.attempts,
      ...(failed.model === null ? {} : { model: failed.model }),
    };
  }
  if (model !== null) {
    // A provider's error message may quote the request, which this error does not let us check: status and code only.
    const { message: _unchecked, ...cause } = modelErrorCause(failed);
    return { ...model, cause, ...tries };
  }
  if (failed instanceof NetworkError) {
    const cause = withMessage({ kind: FailureKind.Hub, exc_type: excTypeOf(failed), code: failed.code }, failed, {});
    return { code: TURN_ERROR_CODE, reason: `the hub refused the turn (${failed.code})`, cause };
  }
  const name = excTypeOf(failed);
  return {
    code: TURN_ERROR_CODE,
    reason: `the turn failed (${name})`,
    cause: withMessage({ kind: FailureKind.Error, exc_type: name }, failed, {}),
  };
}

/**
 * The agent runtime's turn-failure policy, which its client applies (`AgentClientOptions.isTransientFailure`, set by
 * `registerAgent` and `attachAgent`): whether a turn that threw `err` is run again (transient) or reported at once as
 * `ag2.turn.failed` (permanent).
 *
 * - A failed model call (a `ModelCallError`, or the AI SDK's own error for a model not built by `createModel`):
 *   transient when it timed out (`model_timeout`) or the provider was unavailable, rate limiting (HTTP 429) or
 *   unreachable (`model_unavailable`); permanent when it rejected the key or the request, answered malformed output,
 *   or the call could not be made (`model_auth`, `model_rejected`, `model_malformed_output`, `model_error`).
 * - Anything else by the client's rule (`isTransientTurnFailure`): a hub refusal (`protocol_error`, `access_denied`,
 *   …) is permanent; `unavailable`, no hub answering, a timeout, a network error or an unknown exception is transient.
 */
export function isTransientFailure(err: unknown): boolean {
  const failed = RetryError.isInstance(err) && err.lastError !== undefined ? err.lastError : err;
  const model = describeModelError(failed);
  if (model !== null) return model.code === ModelFailureCode.Timeout || model.code === ModelFailureCode.Unavailable;
  return isTransientTurnFailure(failed);
}

/** The failure as `ag2.turn.failed`'s `event_data` carries it, clamped to the schema's bounds. */
export function turnFailedData(agentName: string, failure: TurnFailure): TurnFailedData {
  const { cause, attempts, model } = failure;
  return {
    agent_name: agentName,
    reason: failure.reason.slice(0, 500),
    code: failure.code,
    ...(cause === undefined
      ? {}
      : {
          cause: {
            kind: cause.kind,
            exc_type: cause.exc_type.slice(0, 128),
            ...(cause.status === undefined ? {} : { status: cause.status }),
            ...(cause.code === undefined ? {} : { code: cause.code.slice(0, 128) }),
            ...(cause.message === undefined ? {} : { message: cause.message.slice(0, 300) }),
          },
        }),
    ...(attempts === undefined ? {} : { attempts: Math.min(attempts, 1000) }),
    ...(model === undefined ? {} : { provider: model.provider.slice(0, 128), model: model.model.slice(0, 256) }),
  };
}

/** The id of an agent's failure notice for a trigger: the same on every attempt, so the hub admits one. */
export function turnFailedEnvelopeId(agentId: string, triggerEnvelopeId: string): string {
  return `f-${triggerEnvelopeId}-${agentId}`.slice(0, 128);
}

/** A turn that failed for good, as `reportTurnFailure` reports it (a `FailedTurn` of the client will do). */
export interface FailedTurnInput {
  /** The agent whose turn it was. */
  readonly client: Pick<AgentClient, 'agentId' | 'hub' | 'passport' | 'sendEnvelope'>;
  /** The trigger of the turn. */
  readonly envelope: Envelope;
  /** What the turn's last attempt threw. */
  readonly error: unknown;
}

/**
 * AG2's `_report_turn_failure`, and more: tells the channel (`ag2.turn.failed` to the trigger's audience and its
 * sender, `causation_id` = the trigger, with the cause, attempts and model), logs one short line (`turn failed`:
 * agent by name, channel, code, reason, cause, attempts, model — no prompt, no key, no stack) and reports the
 * failure to the hub (`reportTurnFailure`, audited as `turn_failed`, its message the reason and the cause). A failing
 * notice or report is logged too. Never throws.
 */
export async function reportTurnFailure(failed: FailedTurnInput, logger: Logger): Promise<void> {
  const { client, envelope, error: err } = failed;
  const failure = describeTurnFailure(err);
  const { code, reason, cause, attempts, model } = failure;
  const agent = client.passport.name;
  const context = { agent, channelId: envelope.channel_id, envelopeId: envelope.envelope_id };
  logger.error(
    {
      ...context,
      code,
      reason,
      ...(cause === undefined ? {} : { cause }),
      ...(attempts === undefined ? {} : { attempts }),
      ...(model === undefined ? {} : { provider: model.provider, model: model.model }),
    },
    'turn failed',
  );
  try {
    await client.sendEnvelope({
      envelope_id: turnFailedEnvelopeId(client.agentId, envelope.envelope_id),
      channel_id: envelope.channel_id,
      audience: audienceOf(envelope),
      causation_id: envelope.envelope_id,
      event_type: EV_TURN_FAILED,
      event_data: turnFailedData(agent, failure),
    });
  } catch (noticeErr) {
    logger.warn({ ...context, code: errorCode(noticeErr) }, 'posting ag2.turn.failed failed');
  }
  try {
    await client.hub.call(
      'reportTurnFailure',
      {
        channel_id: envelope.channel_id,
        envelope_id: envelope.envelope_id,
        exc_type: err instanceof Error ? err.name : typeof err,
        // A model failure is worded by its reason and scrubbed cause: the provider's message may quote the key.
        exc_message:
          code === TURN_ERROR_CODE
            ? scrubSecrets(messageOf(err)).slice(0, 4096)
            : cause === undefined
              ? reason
              : `${reason} (${causeLine(cause)})`,
      },
      { caller: client.agentId },
    );
  } catch (reportErr) {
    logger.warn({ ...context, code: errorCode(reportErr) }, 'reporting a failed turn failed');
  }
}

/**
 * The `onTurnFailed` of a hosted agent (`registerAgent`, `attachAgent`): reports each turn its client gave up on with
 * `reportTurnFailure`, so each trigger gets one `ag2.turn.failed`; its log line names the agent, and the channel by
 * its label (`channelLabel`) when the channel can be read. `logger` defaults to the hub client's.
 */
export function turnFailureReporter(options: { readonly logger?: Logger } = {}): TurnFailedListener {
  return async (failed) => {
    const { client, envelope } = failed;
    const channel = await client.getChannel(envelope.channel_id).then(channelLabel, () => null);
    const logger = (options.logger ?? client.hub.logger).child({
      agent: client.passport.name,
      agentId: client.agentId,
      ...(channel === null ? {} : { channel }),
    });
    await reportTurnFailure(failed, logger);
  };
}

/** Whoever saw the trigger, and its sender: everyone when the trigger went to everyone. */
function audienceOf(trigger: Envelope): string[] | null {
  if (trigger.audience === null) return null;
  return [...new Set([...trigger.audience, trigger.sender_id])];
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function errorCode(err: unknown): string {
  return err instanceof NetworkError ? err.code : err instanceof Error ? err.name : typeof err;
}
