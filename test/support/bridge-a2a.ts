/** Helpers of the bridge's A2A tests: an A2A client signed in as a person, messages, and the events of a stream. */
import { Role, TaskState, type Message, type SendMessageRequest, type StreamResponse } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';

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
