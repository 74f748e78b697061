import type { AgentClient } from '@ag2net/client';
import { contextForTrace } from '@ag2net/client/internal';
import type { ChannelMetadata, Envelope } from '@ag2net/protocol';
import { SpanKind, SpanStatusCode, context, trace } from '@opentelemetry/api';
import type { TokenUsage } from '../agent.js';

/** How a turn ended. */
export type TurnResult =
  /** The agent answered (or its adapter built no reply to post). */
  | 'answered'
  /** Nothing to do: the channel is not active, the trigger was answered already, or it is not the agent's turn. */
  | 'skipped'
  /** This attempt of the turn failed; its client runs it again or reports the failure (`ag2.turn.failed`). */
  | 'failed'
  /** The turn was stopped on purpose (its lock lost, the client closing). */
  | 'cancelled';

/** One LLM turn of a hosted agent, as `TurnObserver.turnFinished` is told it. */
export interface TurnOutcome {
  /** The agent's passport name. */
  readonly agent: string;
  readonly agentId: string;
  readonly channelId: string;
  /** The channel's type (`consulting`, `workflow`, …) when the turn got as far as reading it, else `null`. */
  readonly channelType: string | null;
  readonly result: TurnResult;
  /** For a failed turn, the `ag2.turn.failed` code (`rate_limited`, `turn_error`, …); else `null`. */
  readonly code: string | null;
  /** From the trigger's arrival in the handler to the turn's end, in ms. */
  readonly durationMs: number;
  /** The model's tokens over the turn, when the model answered (`null` when it was never asked or failed). */
  readonly usage: TokenUsage | null;
}

/** Told about every turn the default handler runs (the runner feeds Prometheus with it). Must be cheap; never throws. */
export interface TurnObserver {
  readonly turnFinished?: (outcome: TurnOutcome) => void;
}

/** What a running turn fills in for its observer and its log lines. */
export interface TurnRecord {
  /** When the trigger reached the handler: epoch ms (`at`) and `performance.now()` (`mark`, for durations). */
  readonly started: { readonly at: number; readonly mark: number };
  channelType: string | null;
  /** The channel's label for log lines (`channelLabel`), once read. */
  channel: string | null;
  usage: TokenUsage | null;
  code: string | null;
}

/**
 * How log lines name a channel beside its id: its `name` label when it has one (`labels: { name: 'triage' }`),
 * else its type (`consulting`).
 */
export function channelLabel(metadata: Pick<ChannelMetadata, 'labels' | 'manifest'>): string {
  return metadata.labels['name'] ?? metadata.manifest.type;
}

/**
 * Runs one turn in a span `ag2net.turn` (consumer kind) in the trigger's trace, so the reply it sends, and the hub's
 * spans for it, continue that trace; then tells `observer` how it ended. `run` resolves to the turn's result.
 */
export async function observedTurn(
  trigger: Envelope,
  client: Pick<AgentClient, 'agentId' | 'passport'>,
  turn: { readonly observer: TurnObserver | undefined; readonly run: (record: TurnRecord) => Promise<TurnResult> },
): Promise<void> {
  const record: TurnRecord = {
    started: { at: Date.now(), mark: performance.now() },
    channelType: null,
    channel: null,
    usage: null,
    code: null,
  };
  const span = trace.getTracer('@ag2net/agent').startSpan(
    'ag2net.turn',
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'ag2net.agent': client.passport.name,
        'ag2net.agent_id': client.agentId,
        'ag2net.channel_id': trigger.channel_id,
        'ag2net.trigger_id': trigger.envelope_id,
      },
    },
    contextForTrace(trigger.trace_id),
  );
  let result: TurnResult = 'failed';
  try {
    result = await context.with(trace.setSpan(context.active(), span), () => turn.run(record));
  } finally {
    span.setAttribute('ag2net.turn_result', result);
    if (record.channelType !== null) span.setAttribute('ag2net.channel_type', record.channelType);
    if (record.usage !== null) {
      span.setAttribute('gen_ai.usage.input_tokens', record.usage.inputTokens);
      span.setAttribute('gen_ai.usage.output_tokens', record.usage.outputTokens);
    }
    if (result === 'failed') span.setStatus({ code: SpanStatusCode.ERROR, message: record.code ?? 'failed' });
    span.end();
    const notify = turn.observer?.turnFinished;
    if (notify !== undefined) {
      try {
        notify({
          agent: client.passport.name,
          agentId: client.agentId,
          channelId: trigger.channel_id,
          channelType: record.channelType,
          result,
          code: record.code,
          durationMs: performance.now() - record.started.mark,
          usage: record.usage,
        });
      } catch {
        // An observer must not fail a turn that is over.
      }
    }
  }
}
