import type { ChannelMetadata, Health, HubOp, HubRequest, HubResponse, Passport, Resume, Rule } from '@ag2net/protocol';
import type { CallOptions, HubCallOptions } from './rpc.js';
import { partitionRange } from './scatter.js';

/** The hub's default `limit` of list operations. */
const DEFAULT_LIST_LIMIT = 50;

/**
 * The hub's read operations over one `call`. Operations that reveal channel content (`getChannel`, `listChannels`,
 * `adapterState`) are made as `options.caller`, or as the client's default caller when none is given: the identity
 * a participant's hub client is bound to, `$operator` for an operator's client.
 */
export abstract class HubReads {
  /** Calls any hub operation; ops whose subject carries the caller use the client's default caller unless told. */
  abstract call<Op extends HubOp>(op: Op, request: HubRequest<Op>, options?: HubCallOptions): Promise<HubResponse<Op>>;

  /**
   * How many partitions the deployment spreads its channels over (`Health.partitions`), asked of the hub once and
   * kept (see `HubRpc.partitions`).
   */
  abstract partitions(options?: CallOptions): Promise<number>;

  getAgent(nameOrId: string, options?: CallOptions): Promise<Passport> {
    return this.call('getAgent', { name_or_id: nameOrId }, options).then((r) => r.passport);
  }

  getResume(agentId: string, options?: CallOptions): Promise<Resume> {
    return this.call('getResume', { agent_id: agentId }, options).then((r) => r.resume);
  }

  getRule(agentId: string, options?: CallOptions): Promise<Rule> {
    return this.call('getRule', { agent_id: agentId }, options).then((r) => r.rule);
  }

  getSkill(agentId: string, options?: CallOptions): Promise<string | null> {
    return this.call('getSkill', { agent_id: agentId }, options).then((r) => r.skill_md);
  }

  findAgentId(name: string, options?: CallOptions): Promise<string | null> {
    return this.call('findAgentId', { name }, options).then((r) => r.agent_id);
  }

  /** Up to `filter.limit` (default 50) agents, following the hub's page cursors. */
  async listAgents(filter: HubRequest<'listAgents'> = {}, options?: CallOptions): Promise<Passport[]> {
    const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
    const out: Passport[] = [];
    let cursor = filter.cursor ?? null;
    do {
      const page = await this.call('listAgents', { ...filter, limit: limit - out.length, cursor }, options);
      out.push(...page.agents);
      cursor = page.next_cursor;
    } while (cursor !== null && out.length < limit);
    return out;
  }

  /** A channel's metadata, as a participant of it (or the operator). */
  getChannel(channelId: string, options?: HubCallOptions): Promise<ChannelMetadata> {
    return this.call('getChannel', { channel_id: channelId }, options).then((r) => r.channel);
  }

  /**
   * Up to `filter.limit` (default 50) channels the caller takes part in (every channel for the operator), following
   * the hub's page cursors. In a deployment of several partitions, each lists its own channels: they are walked from
   * partition 0 on, each page by page, with the same filter, until `limit`; `options.partition` lists that
   * partition's only. A `filter.cursor` continues one partition's list, so it is refused (`TypeError`) when several
   * are walked.
   */
  async listChannels(filter: HubRequest<'listChannels'> = {}, options?: HubCallOptions): Promise<ChannelMetadata[]> {
    const limit = filter.limit ?? DEFAULT_LIST_LIMIT;
    const partitions =
      options?.partition === undefined ? partitionRange(await this.partitions(options)) : [options.partition];
    const start = filter.cursor ?? null;
    if (start !== null && partitions.length > 1) {
      throw new TypeError(
        `listChannels: a cursor continues one partition's list; name it in options.partition (the deployment has ${partitions.length})`,
      );
    }
    const out: ChannelMetadata[] = [];
    for (const partition of partitions) {
      let cursor = start;
      do {
        const request = { ...filter, limit: limit - out.length, cursor };
        const page = await this.call('listChannels', request, { ...options, partition });
        out.push(...page.channels);
        cursor = page.next_cursor;
      } while (cursor !== null && out.length < limit);
      if (out.length >= limit) break;
    }
    return out;
  }

  /** A channel's adapter state as the caller may see it (see docs/protocol.md); `null` when it has none. */
  adapterState(channelId: string, options?: HubCallOptions): Promise<Record<string, unknown> | null> {
    return this.call('adapterState', { channel_id: channelId }, options).then((r) => r.state);
  }

  health(options?: CallOptions): Promise<Health> {
    return this.call('health', {}, options);
  }
}
