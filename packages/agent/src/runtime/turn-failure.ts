import type { AgentClient, Logger } from '@ag2net/client';
import type { Envelope } from '@ag2net/protocol';

/**
 * AG2's `_report_turn_failure`: logs a failed turn and reports it to the hub (`reportTurnFailure`, audited as
 * `turn_failed`). A failing report is logged too. Never throws.
 */
export async function reportTurnFailure(
  client: Pick<AgentClient, 'agentId' | 'hub'>,
  envelope: Envelope,
  err: unknown,
  logger: Logger,
): Promise<void> {
  const context = { agentId: client.agentId, channelId: envelope.channel_id, envelopeId: envelope.envelope_id };
  logger.error({ err, ...context }, 'turn failed');
  try {
    await client.hub.call(
      'reportTurnFailure',
      {
        channel_id: envelope.channel_id,
        envelope_id: envelope.envelope_id,
        exc_type: err instanceof Error ? err.name : typeof err,
        exc_message: (err instanceof Error ? err.message : String(err)).slice(0, 4096),
      },
      client.agentId,
    );
  } catch (reportErr) {
    logger.warn({ err: reportErr, ...context }, 'reporting a failed turn failed');
  }
}
