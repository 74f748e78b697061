/** Helpers of the bridge's A2A tests: an A2A client signed in as a person, messages, and the events of a stream. */
import { Role, TaskState, type Message, type SendMessageRequest, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import type { AgentHandler } from '@ag2net/client';
import { EV_TEXT } from '@ag2net/protocol';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { acceptingInvites } from './console-agents.js';

/** `fetch` sending `Authorization: Bearer <token>` with every request (the card's and the JSON-RPC calls). */
export function bearerFetch(token: string): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    headers.set('authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
}

/**
 * An A2A client of the agent `name` on a bridge, as the person whose session token is `token`: it reads the agent's
 * card at `<bridge>/a2a/agents/<name>/.well-known/agent-card.json` and calls the JSON-RPC endpoint the card names.
 */
export async function a2aClient(bridgeUrl: string, name: string, token: string): Promise<Client> {
  const fetchImpl = bearerFetch(token);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  // The trailing slash makes the card's well-known path relative to the agent.
  return factory.createFromUrl(`${bridgeUrl}/a2a/agents/${encodeURIComponent(name)}/`);
}

/** A user message saying `text`, in context `contextId` (a new one when empty). */
export function userMessage(
  text: string,
  contextId = '',
  messageId = `m-${Math.random().toString(36).slice(2)}`,
): Message {
  return {
    messageId,
    contextId,
    taskId: '',
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A `SendMessageRequest` of `message`; `returnImmediately` answers the task as soon as it is posted. */
export function sendRequest(message: Message, returnImmediately = false): SendMessageRequest {
  return {
    tenant: '',
    message,
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately },
    metadata: undefined,
  };
}

/** The text of a message's parts. */
export function textOf(message: Message | undefined): string {
  return (message?.parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

/** One stream event, reduced to what the tests compare: its kind, the task's state, and the text it carries. */
export interface EventSummary {
  readonly kind: string;
  readonly state?: string;
  readonly text?: string;
}

export function summarize(event: StreamResponse): EventSummary {
  const payload = event.payload;
  switch (payload?.$case) {
    case 'task':
      return { kind: 'task', state: TaskState[payload.value.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED] };
    case 'statusUpdate': {
      const status = payload.value.status;
      const text = textOf(status?.message);
      return {
        kind: 'status',
        state: TaskState[status?.state ?? TaskState.TASK_STATE_UNSPECIFIED],
        ...(text === '' ? {} : { text }),
      };
    }
    case 'artifactUpdate':
      return {
        kind: 'artifact',
        text: (payload.value.artifact?.parts ?? [])
          .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
          .join(''),
      };
    case 'message':
      return { kind: 'message', text: textOf(payload.value) };
    default:
      return { kind: 'none' };
  }
}

/** The id of the task a stream event is about. */
export function taskIdOfEvent(event: StreamResponse): string {
  const payload = event.payload;
  switch (payload?.$case) {
    case 'task':
      return payload.value.id;
    case 'statusUpdate':
    case 'artifactUpdate':
      return payload.value.taskId;
    default:
      return '';
  }
}

/** The task of a `sendMessage` answer; the bridge answers every message with a task. */
export function asTask(result: Message | Task): Task {
  if (!('id' in result)) throw new Error(`expected a task, got message ${result.messageId}`);
  return result;
}

/** The events of a stream, up to the one `until` holds for (included), or to its end. */
export async function collect(
  stream: AsyncGenerator<StreamResponse>,
  until?: (e: StreamResponse) => boolean,
): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) {
    events.push(event);
    if (until?.(event) === true) break;
  }
  return events;
}

/** Gates by text: `of(t).opened` resolves once the test called `of(t).open()`, whichever of the two came first. */
export class Gates {
  readonly #gates = new Map<string, { opened: Promise<void>; open: () => void }>();

  of(text: string): { opened: Promise<void>; open: () => void } {
    let gate = this.#gates.get(text);
    if (gate === undefined) {
      let open = (): void => undefined;
      const opened = new Promise<void>((resolve) => (open = resolve));
      gate = { opened, open };
      this.#gates.set(text, gate);
    }
    return gate;
  }
}

/**
 * The handler of an agent that accepts invites and answers a text `t` with `gate: t`, caused by it, once the test
 * opened `t`'s gate: the test decides when a task completes.
 */
export function gatedAnswers(gates: Gates): AgentHandler {
  return acceptingInvites((envelope, client) => {
    if (envelope.event_type !== EV_TEXT) return Promise.resolve();
    const text = String(envelope.event_data['text']);
    // Held in its own promise: one held question does not hold the next delivery.
    void gates
      .of(text)
      .opened.then(() =>
        client.send(envelope.channel_id, `gate: ${text}`, { causationId: envelope.envelope_id }).catch(() => undefined),
      );
    return Promise.resolve();
  });
}

/**
 * Writes an agent-runner config into `dir` for `oracle` (the scripted model answering `answers` in order, a SKILL.md,
 * a resume) and `broken` (a model at `nowhere`, which nobody serves: its turns fail); resolves with its path.
 */
export async function writeA2aAgents(
  dir: string,
  options: { answers: readonly string[]; nowhere: string },
): Promise<string> {
  await writeFile(
    join(dir, 'oracle.md'),
    '---\nname: capitals\ndescription: Names the capital of a country.\n---\n# Capitals\n',
  );
  const path = join(dir, 'agents.yaml');
  await writeFile(
    path,
    [
      'agents:',
      '  - name: oracle',
      '    instructions: Answer with the capital only.',
      '    skill: oracle.md',
      '    resume: { summary: Knows every capital., claimed_capabilities: [geography], domains: [europe] }',
      `    model: { provider: scripted, script: [${options.answers.join(', ')}] }`,
      '  - name: broken',
      '    max_retries: 0',
      `    model: { provider: openai-compatible, model: m, baseURL: '${options.nowhere}', apiKey: k }`,
      '',
    ].join('\n'),
  );
  return path;
}
