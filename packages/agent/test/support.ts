/**
 * Test kit of the agent package's integration tests: one hub per test on a fresh prefix of a shared nats-server,
 * a client of it, and helpers to read channels.
 */
import { createDefaultAdapterRegistry } from '@ag2net/adapters';
import { HubClient, ackInvite, isInviteFor, type AgentClient } from '@ag2net/client';
import { startHub, type Hub } from '@ag2net/hub';
import { EV_TEXT, type ChannelMetadata, type Envelope, type PassportInput, type ResumeInput } from '@ag2net/protocol';
import { startNatsServer, uniqueName, waitFor, type NatsServer } from '@ag2net/test-support';
import { ChannelWatches, hubTaskDirectory, type ToolContext } from '../src/index.js';

/** A hub and a client of it; `close()` stops both. */
export interface Net {
  readonly hub: Hub;
  readonly client: HubClient;
  readonly prefix: string;
  close(): Promise<void>;
}

/** Starts NATS once per file; `open()` gives each test its own hub and client; `closeAll()` ends them. */
export function netKit(): {
  start(): Promise<void>;
  open(): Promise<Net>;
  closeAll(): Promise<void>;
  stop(): Promise<void>;
  readonly url: () => string;
} {
  let nats: NatsServer | null = null;
  const opened: Net[] = [];
  const url = (): string => {
    if (nats === null) throw new Error('nats-server not started');
    return nats.url;
  };
  return {
    url,
    async start() {
      nats = await startNatsServer();
    },
    async open() {
      const prefix = uniqueName('ag');
      const hub = await startHub({ servers: url(), prefix, sweepIntervalMs: 0 });
      const client = await HubClient.connect({ servers: url(), prefix, retryForMs: 5_000 });
      const net: Net = {
        hub,
        client,
        prefix,
        async close() {
          await client.close();
          await hub.close();
        },
      };
      opened.push(net);
      return net;
    },
    async closeAll() {
      for (const net of opened.splice(0).reverse()) await net.close();
    },
    async stop() {
      await nats?.stop();
    },
  };
}

/** `[sender name, text]` of a log's text envelopes, with ids mapped to names by `names`. */
export function texts(log: readonly Envelope[], names: Readonly<Record<string, string>> = {}): [string, string][] {
  return log
    .filter((e) => e.event_type === EV_TEXT)
    .map((e) => [names[e.sender_id] ?? e.sender_id, String(e.event_data['text'])]);
}

/** Waits until `probe` holds (something other processes drive: an agent's turn, a delivery). */
export function until<T>(probe: () => T | Promise<T>, what: string): Promise<Exclude<T, false | undefined>> {
  return waitFor(probe, { what, timeoutMs: 15_000 });
}

/** An agent the tests call network tools as, with the waiters its handler feeds (it accepts every invite). */
export interface ToolAgent {
  readonly client: AgentClient;
  /** The tool context of a turn in `channel` (none by default) at delegation depth `depth`. */
  ctx(channel?: ChannelMetadata | null, depth?: number): ToolContext;
}

/** Registers `name` as a tool-calling agent. */
export async function toolAgent(
  hub: HubClient,
  name: string,
  options: {
    readonly resume?: ResumeInput;
    readonly skillMd?: string;
    readonly passport?: Partial<PassportInput>;
  } = {},
): Promise<ToolAgent> {
  const waiters = new ChannelWatches();
  const client = await hub.register(
    { ...options.passport, name },
    {
      ...(options.resume === undefined ? {} : { resume: options.resume }),
      ...(options.skillMd === undefined ? {} : { skillMd: options.skillMd }),
      handler: async (envelope, self) => {
        if (waiters.offer(envelope)) return;
        if (isInviteFor(self, envelope)) await ackInvite(self, envelope);
      },
    },
  );
  const adapters = createDefaultAdapterRegistry();
  return {
    client,
    ctx: (channel = null, depth = 0) => ({
      client,
      channel,
      depth,
      adapters,
      waiters,
      tasks: hubTaskDirectory(client),
    }),
  };
}
