import type { AdapterLookup, AgentAdapter } from '@ag2net/adapters';
import type { AgentClient, HubClient } from '@ag2net/client';
import type { ChannelMetadata, TaskMetadata } from '@ag2net/protocol';
import type { ChannelWatches } from '../runtime/watches.js';

/** The part of an agent's client the network tools use. */
export type ToolClient = Pick<
  AgentClient,
  'agentId' | 'passport' | 'open' | 'send' | 'sendEnvelope' | 'readWal' | 'closeChannel' | 'getChannel' | 'listChannels'
> & {
  readonly hub: Pick<HubClient, 'getAgent' | 'getResume' | 'getSkill' | 'listAgents'>;
};

/** The hub's task records as the `tasks` tool reads them. */
export interface TaskDirectory {
  /** The task; throws (`NotFoundError`) when there is none. */
  getTask(taskId: string): Promise<TaskMetadata>;
  /** Tasks in the hub's order (creation); of one owner when `ownerId` is set. */
  listTasks(filter: { readonly ownerId: string | null; readonly limit: number }): Promise<TaskMetadata[]>;
}

/** Everything a network tool acts with during one turn. */
export interface ToolContext {
  /** The agent the tools act as. */
  readonly client: ToolClient;
  /** The channel of the turn being handled; `null` outside a turn. */
  readonly channel: ChannelMetadata | null;
  /** Delegation depth of the envelope being handled; 0 outside a turn. */
  readonly depth: number;
  /** The adapters envelopes are built with (`say`). */
  readonly adapters: AdapterLookup<AgentAdapter>;
  /** Where `delegate` waits for the consultant's reply. */
  readonly waiters: ChannelWatches;
  /** The task records `tasks` reads; `null` when there are none to read. */
  readonly tasks: TaskDirectory | null;
  /** Aborted when the turn is cancelled: tools that wait (`delegate`, `tasks wait`) stop waiting. Default none. */
  readonly signal?: AbortSignal;
}
