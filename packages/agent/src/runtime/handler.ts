import {
  createDefaultAdapterRegistry,
  type AdapterLookup,
  type AgentAdapter,
  type ToolSpec,
  type ViewSpec,
} from '@ag2net/adapters';
import { ackInvite, replyEnvelopeId, type AgentClient, type AgentHandler, type Logger } from '@ag2net/client';
import {
  ChannelState,
  EV_CHANNEL_INVITE,
  EV_TURN_FAILED,
  isProtocolEvent,
  type ChannelMetadata,
  type Envelope,
} from '@ag2net/protocol';
import type { Agent } from '../agent.js';
import { modelIdentity } from '../model/identity.js';
import type { TaskDirectory, ToolContext } from '../tools/context.js';
import { adapterTools, networkTools, type AdapterToolBinder } from '../tools/network.js';
import { toModelMessages } from '../views/messages.js';
import { viewFromSpec } from '../views/spec.js';
import type { ViewPolicy } from '../views/types.js';
import { loadDirectory } from './directory.js';
import { ChannelLogCache, readLogUntil } from './log.js';
import { hubTaskDirectory } from './tasks.js';
import { describeTurnFailure } from './turn-failure.js';
import { renderCurrentInput } from './turn-input.js';
import { withTurn } from './turn-context.js';
import { turnReport } from './turn-report.js';
import { channelLabel, observedTurn, type TurnObserver, type TurnRecord, type TurnResult } from './turn-observer.js';
import { ChannelWatches } from './watches.js';

/** Options of `createDefaultHandler`. */
export interface DefaultHandlerOptions {
  /**
   * The agent's side of each channel protocol, with which channels are read and answered: an `AdapterRegistry`, or
   * any lookup of `AgentAdapter`s; default `createDefaultAdapterRegistry()`.
   */
  readonly adapters?: AdapterLookup<AgentAdapter>;
  /** Offer the network tools (`delegate`, `peers`, `channels`, `tasks`, `context`) and say who the agent is; default true. */
  readonly networkTools?: boolean;
  /** The view a participant sees a channel through; default the adapter's (`viewFromSpec`). */
  readonly view?: (metadata: ChannelMetadata, participantId: string, adapterView: ViewSpec) => ViewPolicy;
  /** Binds adapter tool descriptions other than the built-in `say`. */
  readonly bindTool?: AdapterToolBinder;
  /** The task records the `tasks` tool reads; default the hub's (`getTask`, `listTasks`); `null` for none. */
  readonly tasks?: TaskDirectory | null;
  /** pino-compatible logger; default the hub client's. */
  readonly logger?: Logger;
  /** Told how every turn ended, how long it took and the model's tokens (for metrics); default none. */
  readonly observer?: TurnObserver;
  /**
   * Attach the turn's report (`event_data.turn`: start, duration, model, tokens, attempts, retries, tool calls; see
   * `TurnReportSchema`) to every answer the handler posts, so that people see how each turn went; default true.
   */
  readonly turnReport?: boolean;
}

/**
 * AG2's default handler for `agent`: accepts invites, ignores other protocol events, and answers every other
 * envelope with one LLM turn — once per trigger (a reply already posted with `causation_id` = the trigger ends
 * the turn), only when the hub says it may send, over the channel's history as its view projects it, with the
 * adapter's tools and the network tools. The reply the adapter builds is posted with `causation_id` = trigger
 * and the id `replyEnvelopeId(agent, trigger)`, so a redelivered turn is admitted once, and with the turn's report in
 * `event_data.turn` (see `turnReport`). A failed turn throws what it met, to the client's turn-failure policy: run
 * again when transient, else reported once as `ag2.turn.failed` by the client's `onTurnFailed` (`registerAgent` sets
 * both: `isTransientFailure`, `turnFailureReporter`). A cancelled turn returns.
 */
export function createDefaultHandler(agent: Agent, options: DefaultHandlerOptions = {}): AgentHandler {
  const adapters = options.adapters ?? createDefaultAdapterRegistry();
  const waiters = new ChannelWatches();
  // Each turn reads only what its channel's log gained since this agent's last turn there.
  const logs = new ChannelLogCache();
  return async (envelope, client, turn) => {
    if (waiters.offer(envelope)) return;
    // Every line of the handler names the agent by name and id.
    const logger = (options.logger ?? client.hub.logger).child({
      agent: client.passport.name,
      agentId: client.agentId,
    });
    if (envelope.event_type === EV_CHANNEL_INVITE) {
      if (envelope.sender_id === client.agentId) return;
      // A failed ack is not fatal: the hub times the invite out and closes the channel.
      await ackInvite(client, envelope).catch((err: unknown) =>
        logger.warn({ err, channelId: envelope.channel_id }, 'invite ack failed'),
      );
      return;
    }
    // Someone's failed turn is news, not a question: answering it could loop between two failing agents.
    if (isProtocolEvent(envelope.event_type) || envelope.event_type === EV_TURN_FAILED) return;
    // Aborts when the turn must stop (its lock lost, the client disconnecting): the model call and tools stop too.
    const { signal } = turn;
    await observedTurn(envelope, client, {
      observer: options.observer,
      run: async (record) => {
        try {
          return await runTurn(envelope, client, { agent, adapters, waiters, logs, options, signal, record });
        } catch (err) {
          // Log lines name the channel by its label as well as its id, once the turn has read its metadata.
          const log = record.channel === null ? logger : logger.child({ channel: record.channel });
          // A cancelled turn was stopped on purpose: nobody is waiting for a failure notice.
          if (signal.aborted) {
            log.info({ agent: client.passport.name, channelId: envelope.channel_id }, 'turn cancelled');
            return 'cancelled';
          }
          // The client decides whether this attempt runs again or the failure is reported (one policy for both).
          record.code = describeTurnFailure(err).code;
          log.warn({ channelId: envelope.channel_id, code: record.code }, 'turn attempt failed');
          throw err;
        }
      },
    });
  };
}

interface TurnDeps {
  readonly agent: Agent;
  readonly adapters: AdapterLookup<AgentAdapter>;
  readonly waiters: ChannelWatches;
  readonly logs: ChannelLogCache;
  readonly options: DefaultHandlerOptions;
  readonly signal: AbortSignal;
  /** What the turn tells its observer: filled in as it goes. */
  readonly record: TurnRecord;
}

async function runTurn(envelope: Envelope, client: AgentClient, deps: TurnDeps): Promise<TurnResult> {
  const self = client.agentId;
  const channelId = envelope.channel_id;
  const metadata = await client.getChannel(channelId);
  deps.record.channelType = metadata.manifest.type;
  deps.record.channel = channelLabel(metadata);
  if (metadata.state !== ChannelState.Active) return 'skipped';
  const answered = await client.findEnvelopeByCausation(channelId, {
    senderId: self,
    causationId: envelope.envelope_id,
  });
  if (answered !== null) return 'skipped';
  if (!(await client.canSend(channelId))) return 'skipped';

  const adapter = deps.adapters.get(metadata.manifest.type, metadata.manifest.version);
  const spec = adapter.defaultViewPolicy(metadata, self);
  const view = deps.options.view?.(metadata, self, spec) ?? viewFromSpec(spec);
  const directory = await loadDirectory(client.hub);
  const history = await view.project(await readLogUntil(client, envelope, deps.logs), {
    participantId: self,
    channel: metadata,
    renderEnvelope: (e) => adapter.renderEnvelope(e),
    nameFor: directory.nameFor,
  });
  const input = await renderCurrentInput(envelope, {
    view,
    adapter,
    participantId: self,
    channel: metadata,
    nameFor: directory.nameFor,
  });
  if (!input) return 'skipped';

  const ctx: ToolContext = {
    client,
    channel: metadata,
    depth: envelope.depth,
    adapters: deps.adapters,
    waiters: deps.waiters,
    tasks: deps.options.tasks === undefined ? hubTaskDirectory(client) : deps.options.tasks,
    signal: deps.signal,
  };
  const logger = (deps.options.logger ?? client.hub.logger).child({
    agent: client.passport.name,
    agentId: self,
    channel: deps.record.channel,
  });
  const state = await client.adapterState(channelId);
  const bound = adapterTools(toolSpecs(adapter, { metadata, state, self }, logger), ctx, deps.options.bindTool);
  if (bound.unbound.length > 0) logger.warn({ channelId, tools: bound.unbound }, 'adapter tools without a binding');
  const network = deps.options.networkTools ?? true;
  const turn = { client, channelId, triggerId: envelope.envelope_id, signal: deps.signal };
  const reply = await withTurn(turn, () =>
    deps.agent.ask(input, {
      history: toModelMessages(history),
      tools: { ...(network ? networkTools(ctx) : {}), ...bound.tools },
      preamble: network ? [`You are ${client.passport.name} (agent_id: ${self}).`] : [],
      signal: deps.signal,
    }),
  );
  deps.record.usage = reply.usage;

  // Tools may have moved the channel on during the turn (a `say`, a context update): build from the state now.
  const after = await client.adapterState(channelId);
  if (after === null) throw new Error(`channel ${channelId} has no adapter state`);
  const out = adapter.buildRoundEnvelope({
    metadata,
    senderId: self,
    reply: { body: reply.text },
    events: reply.events,
    state: after,
    nameToId: directory.nameToId,
  });
  if (out === null) return 'answered';
  const report =
    deps.options.turnReport === false
      ? null
      : turnReport({
          startedAt: deps.record.started.at,
          durationMs: performance.now() - deps.record.started.mark,
          model: modelIdentity(deps.agent.model),
          reply,
        });
  await client.sendEnvelope({
    ...out,
    ...(report === null ? {} : { event_data: { ...out.event_data, turn: report } }),
    envelope_id: replyEnvelopeId(self, envelope.envelope_id),
    causation_id: envelope.envelope_id,
  });
  return 'answered';
}

/** The adapter's tools for this turn; a failing `toolsFor` is logged and offers none (AG2). */
function toolSpecs(
  adapter: AgentAdapter,
  turn: { readonly metadata: ChannelMetadata; readonly state: Record<string, unknown> | null; readonly self: string },
  logger: Logger,
): readonly ToolSpec[] {
  const { metadata, state, self } = turn;
  try {
    return adapter.toolsFor(metadata, state, self);
  } catch (err) {
    logger.error({ err, channelId: metadata.channel_id }, 'adapter toolsFor failed');
    return [];
  }
}
