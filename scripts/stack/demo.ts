import { causeLine } from '@ag2net/agent';
import { HubClient, type Channel, type HumanClient } from '@ag2net/client';
import { join } from 'node:path';
import { FromSpeaker, ToolCalled, AgentTarget, Transition, TransitionGraph, TerminateTarget } from '@ag2net/adapters';
import {
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_PACKET,
  EV_TEXT,
  EV_TURN_FAILED,
  TurnFailedDataSchema,
  isChannelProtocolEvent,
  type Envelope,
} from '@ag2net/protocol';
import { ChannelFollower } from './channel-follower.js';
import { ensurePersonKey } from './person-key.js';

/** Who the demo talks to: the agents the demo runner hosts (agent-runner/demo/agents.yaml). */
export const DEMO_AGENTS = ['expert', 'pal', 'critic', 'optimist', 'triage', 'billing'] as const;

/** The demo's person: the name the demo's human participant registers (and attaches to on every later run). */
export const DEMO_PERSON = 'you';

/** How the demo's person gets onto a secured stack. */
export interface DemoAuth {
  /** The registrant's `.creds` file: what the demo connects with before it has an identity of its own. */
  readonly creds: string;
  /** API keys by identity name (the person's is used). */
  readonly apiKeys: Readonly<Record<string, string>>;
  /** Where the person's issued credentials are kept (`you.creds`) and reused on the next run. */
  readonly credsDir: string;
  /**
   * The person's nkey seed: the one the bridge derives for it from its secret (`personSeed`), so that the person
   * who signs in to the web console is the demo's person, with its channels. Without it the person gets a key of its
   * own the first time (and a bridge cannot attach it).
   */
  readonly personSeed?: string;
}

/**
 * Connects to the stack and attaches the demo's person: on an insecure stack over the shared connection; on a
 * secured one as the registrant, registering the person with its API key and the bridge's key for it the first time
 * (`ensurePersonKey`, which also moves a person registered with another key to that one) and reconnecting with the
 * credentials it kept on every later run. The person's own connection (`you.hub`) is the one the demo works on.
 */
export async function connectPerson(options: {
  readonly natsUrl: string;
  readonly prefix: string;
  readonly auth: DemoAuth | null;
  readonly retryForMs?: number;
}): Promise<{ hub: HubClient; you: HumanClient; closedOnReplace: number }> {
  const { auth } = options;
  const hub = await HubClient.connect({
    servers: options.natsUrl,
    prefix: options.prefix,
    ...(options.retryForMs === undefined ? {} : { retryForMs: options.retryForMs }),
    ...(auth === null ? {} : { creds: auth.creds }),
  });
  try {
    if (auth === null) {
      const you = await hub.attachHuman(DEMO_PERSON, { passport: { name: DEMO_PERSON } });
      return { hub, you, closedOnReplace: 0 };
    }
    const token = auth.apiKeys[DEMO_PERSON];
    if (token === undefined) throw new Error(`no API key for ${DEMO_PERSON}`);
    const credsPath = join(auth.credsDir, `${DEMO_PERSON}.creds`);
    const { closed } =
      auth.personSeed === undefined
        ? { closed: 0 }
        : await ensurePersonKey({ hub, name: DEMO_PERSON, apiKey: token, seed: auth.personSeed, credsPath });
    const you = await hub.attachHuman(DEMO_PERSON, {
      credsPath,
      passport: { name: DEMO_PERSON, kind: 'human', auth: { scheme: 'api_key', claim: { token } } },
    });
    return { hub, you, closedOnReplace: closed };
  } catch (err) {
    await hub.close();
    throw err;
  }
}

/** Options of `runDemo`. */
export interface DemoOptions {
  readonly natsUrl: string;
  readonly prefix: string;
  readonly say: (line: string) => void;
  /** How long to wait for each agent answer, in ms. */
  readonly turnTimeoutMs: number;
  /** The stack's credentials; absent or `null` on a stack without auth. */
  readonly auth?: DemoAuth | null;
}

/** How the demo went: what failed did not stop it. */
export interface DemoOutcome {
  /** The failure notices (`ag2.turn.failed`) the agents posted: their model could not answer. */
  readonly failedTurns: number;
  /**
   * Why the demo stopped before its last channel, when something other than a failure notice stopped a channel (no
   * answer in time, an error): `<channel>: <reason>`; `null` when it ran to its end.
   */
  readonly stopped: string | null;
}

/** An agent posted a failure notice where the demo waited for its answer. */
class AgentFailedError extends Error {
  override readonly name = 'AgentFailedError';
}

/**
 * Drives one channel of each protocol as a human participant and prints the transcripts as they happen: a
 * consulting question, a conversation, a three-way discussion, and a workflow with a handoff and a finish. An agent
 * whose model fails posts a failure notice, which is printed with its cause; the channel is closed (the hub closes
 * all but the conversation itself) and the demo goes on with the next one. Anything else that stops a channel (no
 * answer in time, an error) is printed and ends the demo there: the next channels would wait just as long for
 * nothing. Throws only when it cannot start: the person cannot connect, or the agents are not registered.
 */
export async function runDemo(options: DemoOptions): Promise<DemoOutcome> {
  const { say } = options;
  const { hub: connection, you } = await connectPerson({ ...options, auth: options.auth ?? null });
  await using _connection = connection;
  // The directory is public, but on a secured stack only to identities: ask it as the person.
  const hub = you.hub;
  for (const name of DEMO_AGENTS) {
    const deadline = Date.now() + 60_000;
    while ((await hub.findAgentId(name)) === null) {
      if (Date.now() > deadline) throw new Error(`agent ${name} did not register; is agent-runner running?`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const names = new Map<string, string>([[you.agentId, DEMO_PERSON]]);
  for (const name of DEMO_AGENTS) names.set((await hub.findAgentId(name)) ?? name, name);
  const show = (label: string, e: Envelope): void => say(`  ${label.padEnd(12)} ${line(names, e)}`);
  const labels = new Map<string, string>();
  let failedTurns = 0;
  let stopped: string | null = null;
  // What the others post and each close, as the log has it (the person's own lines are shown as they are sent).
  const follower = new ChannelFollower({
    you,
    timeoutMs: options.turnTimeoutMs,
    onEnvelope: (e) => {
      const others = e.sender_id !== you.agentId && !isChannelProtocolEvent(e.event_type);
      if (others && e.event_type === EV_TURN_FAILED) failedTurns += 1;
      if (others || e.event_type === EV_CHANNEL_CLOSED) show(labels.get(e.channel_id) ?? '', e);
    },
  });
  const wait = waiter(follower, names);
  /**
   * Runs one demo channel, unless the demo stopped; when it fails, closes what is left of it. After a failure notice
   * (printed as it was read) the demo goes on; any other reason is printed here and stops the demo.
   */
  const step = async (
    heading: string,
    label: string,
    run: (opened: (c: Channel) => Channel) => Promise<void>,
  ): Promise<void> => {
    if (stopped !== null) return;
    say(`\n${heading}`);
    const held: { channel?: Channel } = {};
    try {
      await run((c) => (held.channel = c));
    } catch (err) {
      if (!(err instanceof AgentFailedError)) {
        const reason = err instanceof Error ? err.message : String(err);
        stopped = `${label}: ${reason}`;
        say(`  ${label.padEnd(12)} · the demo stops here: ${reason}`);
      }
      if (held.channel !== undefined) await closeQuietly(held.channel, follower);
    }
  };

  await step('1/4 consulting — one question, one answer, then the channel closes', 'consulting', async (opened) => {
    const consult = opened(await openLabelled(you, labels, 'consulting', { type: 'consulting', target: 'expert' }));
    await sendShown(you, consult, 'What does a write-ahead log guarantee, in one sentence?', say);
    await wait.closed(consult);
  });

  await step('2/4 conversation — free two-party chat', 'conversation', async (opened) => {
    const chat = opened(await openLabelled(you, labels, 'conversation', { type: 'conversation', target: 'pal' }));
    for (const text of ['Hi pal! How is the network today?', 'Tell me one fun fact about NATS.']) {
      await sendShown(you, chat, text, say);
      await wait.textFrom(chat, 'pal');
    }
    await chat.close('demo_done');
    await wait.closed(chat);
  });

  await step('3/4 discussion — round robin among you, critic and optimist', 'discussion', async (opened) => {
    const panel = opened(
      await openLabelled(you, labels, 'discussion', { type: 'discussion', target: ['critic', 'optimist'] }),
    );
    await sendShown(you, panel, 'Should we ship the release on Friday?', say);
    await wait.textFrom(panel, 'critic');
    await wait.textFrom(panel, 'optimist');
    await sendShown(you, panel, 'Thank you both: we ship Monday.', say);
    await panel.close('demo_done');
    await wait.closed(panel);
  });

  await step('4/4 workflow — triage hands off to billing, billing finishes the case', 'workflow', async (opened) => {
    const ids = (n: string): string => [...names].find(([, v]) => v === n)?.[0] ?? n;
    const graph = new TransitionGraph({
      initialSpeaker: you.agentId,
      transitions: [
        new Transition(new FromSpeaker(you.agentId), new AgentTarget(ids('triage'))),
        new Transition(new ToolCalled('transfer_to_billing'), new AgentTarget(ids('billing'))),
      ],
      defaultTarget: new TerminateTarget('no_route'),
      maxTurns: 6,
    });
    const flow = opened(
      await openLabelled(you, labels, 'workflow', {
        type: 'workflow',
        target: ['triage', 'billing'],
        knobs: { graph: graph.toDict() },
      }),
    );
    await sendShown(you, flow, 'I was charged twice for my subscription.', say);
    const end = await wait.closed(flow);
    say(`\nworkflow ended: ${String(end.event_data['reason'])}`);
  });
  return { failedTurns, stopped };
}

/** Closes a demo channel a failure left open (the hub closed it already, or it cannot be), and shows its close. */
async function closeQuietly(channel: Channel, follower: ChannelFollower): Promise<void> {
  try {
    await channel.close('demo_done');
  } catch {
    // Closed already (the hub closes a channel whose expected speaker failed), or the hub is not answering.
  }
  await follower.closed(channel).catch(() => undefined);
}

async function openLabelled(
  you: HumanClient,
  labels: Map<string, string>,
  label: string,
  options: Parameters<HumanClient['open']>[0],
): Promise<Channel> {
  const channel = await you.open(options);
  labels.set(channel.channelId, label);
  return channel;
}

async function sendShown(you: HumanClient, channel: Channel, text: string, say: (line: string) => void): Promise<void> {
  await channel.send(text);
  say(`  ${channel.metadata.manifest.type.padEnd(12)} you: ${text}`);
}

function waiter(follower: ChannelFollower, names: ReadonlyMap<string, string>) {
  return {
    closed: (channel: Channel): Promise<Envelope> => follower.closed(channel),
    textFrom: async (channel: Channel, name: string): Promise<Envelope> => {
      const e = await follower.until(
        channel,
        (x) =>
          (x.event_type === EV_TEXT || x.event_type === EV_PACKET || x.event_type === EV_TURN_FAILED) &&
          names.get(x.sender_id) === name,
        `answer from ${name}`,
      );
      // The agent's model failed (the notice is printed): stop waiting for an answer that is not coming.
      if (e.event_type === EV_TURN_FAILED) throw new AgentFailedError(`${name} could not answer`);
      return e;
    },
  };
}

function line(names: ReadonlyMap<string, string>, e: Envelope): string {
  const who = names.get(e.sender_id) ?? e.sender_id;
  if (e.event_type === EV_TEXT) return `${who}: ${String(e.event_data['text'])}`;
  if (e.event_type === EV_PACKET) {
    const routing = e.event_data['routing'];
    const body = typeof e.event_data['body'] === 'string' ? e.event_data['body'] : '';
    const kind = typeof routing === 'object' && routing !== null && 'kind' in routing ? String(routing.kind) : 'text';
    return `${who}: ${body}${kind === 'text' ? '' : `  [${kind}]`}`;
  }
  if (e.event_type === EV_TURN_FAILED) return `· ${who} could not answer: ${failureOf(e)}`;
  if (e.event_type === EV_CHANNEL_CLOSED || e.event_type === EV_CHANNEL_EXPIRED) {
    return `· channel ${e.event_type === EV_CHANNEL_CLOSED ? 'closed' : 'expired'}: ${String(e.event_data['reason'])}`;
  }
  return `· ${who}: ${e.event_type}`;
}

/** A failure notice's reason, and its cause when it tells one: `the model could not be reached … (ECONNREFUSED …)`. */
function failureOf(e: Envelope): string {
  const parsed = TurnFailedDataSchema.safeParse(e.event_data);
  if (!parsed.success) return String(e.event_data['reason']);
  const { reason, cause } = parsed.data;
  return cause === undefined ? reason : `${reason} (${causeLine(cause)})`;
}
