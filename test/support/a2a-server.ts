import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { Role, TaskState, type AgentCard, type Message } from '@a2a-js/sdk';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { textAgentCard } from '../../agent-runner/src/a2a/card.js';
import type { AddressInfo } from 'node:net';

/**
 * A real A2A server for tests, on node:http with `@a2a-js/sdk`'s request handler, whose paths behave differently:
 * - `/agent`: answers `<name> heard: <the last line it was sent>` as a task (working, then the text as an artifact
 *   in two streamed chunks, then completed), `name` being the `?name=` of the URL;
 * - `/gated`: like `/agent`, but holds each task in `working` until `release()`;
 * - `/failing`: its task ends `failed` with the message `the remote broke`;
 * - `/http500`: answers every request HTTP 500;
 * - `/huge`: streams one event with a 10 MB text part;
 * - `/drip`: accepts the stream and sends a comment line a second, forever, with no event;
 * every other path is 404.
 */
export interface TestA2aServer {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** Calls received on `path` (any method but cancellations). */
  calls(path: string): number;
  /** `CancelTask` requests received, by path. */
  cancels(path: string): number;
  /** The last line of each message a task on `path` was started with, in order. */
  heard(path: string): string[];
  /** The last line of the message of each task on `path` that was cancelled, in order. */
  cancelledHeard(path: string): string[];
  /** Lets every held `/gated` task finish, now and until `hold()`. */
  release(): void;
  /** Holds `/gated` tasks again, from the next one on. */
  hold(): void;
  /** Headers of the last call on `path`. */
  lastHeaders(path: string): IncomingMessage['headers'] | undefined;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const TEN_MB = 10 * 1024 * 1024;

export async function startA2aServer(): Promise<TestA2aServer> {
  const calls = new Map<string, number>();
  const cancels = new Map<string, number>();
  const heardBy = new Map<string, string[]>();
  const cancelledBy = new Map<string, string[]>();
  const noted = (map: Map<string, string[]>, path: string) => (line: string) => {
    map.set(path, [...(map.get(path) ?? []), line]);
  };
  const headers = new Map<string, IncomingMessage['headers']>();
  let released = false;
  const waiting: (() => void)[] = [];
  const gate = (): Promise<void> => (released ? Promise.resolve() : new Promise((r) => waiting.push(r)));
  const handlers = new Map<string, JsonRpcTransportHandler>();
  const drips = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    void serve(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname;
    const body = await readBody(req);
    const method = methodOf(body);
    if (method === 'CancelTask') cancels.set(path, (cancels.get(path) ?? 0) + 1);
    else {
      calls.set(path, (calls.get(path) ?? 0) + 1);
      headers.set(path, req.headers);
    }
    switch (path) {
      case '/http500':
        res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error: secret stack trace');
        return;
      case '/huge': {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const event = { jsonrpc: '2.0', id: idOf(body), result: { message: textMessage('x'.repeat(TEN_MB)) } };
        res.end(`data: ${JSON.stringify(event)}\n\n`);
        return;
      }
      case '/drip': {
        if (method === 'CancelTask') {
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        drips.add(res);
        const timer = setInterval(() => res.write(': still thinking\n\n'), 1_000);
        res.on('close', () => {
          clearInterval(timer);
          drips.delete(res);
        });
        return;
      }
      case '/agent':
      case '/gated':
      case '/failing':
        await answerRpc(handlerFor(path, url.searchParams.get('name') ?? 'remote'), body, res);
        return;
      default:
        res.writeHead(404).end();
    }
  }

  function handlerFor(path: string, name: string): JsonRpcTransportHandler {
    const key = `${path}?${name}`;
    const found = handlers.get(key);
    if (found !== undefined) return found;
    const executor = textExecutor({
      name,
      hold: path === '/gated' ? gate : null,
      fail: path === '/failing',
      onHeard: noted(heardBy, path),
      onCancelled: noted(cancelledBy, path),
    });
    const handler = new JsonRpcTransportHandler(
      new DefaultRequestHandler(cardOf(name), new InMemoryTaskStore(), executor),
    );
    handlers.set(key, handler);
    return handler;
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // listen(0, host) always binds a TCP address.
  const { port } = server.address() as AddressInfo;
  const close = async (): Promise<void> => {
    released = true;
    for (const r of waiting.splice(0)) r();
    for (const res of drips) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    origin: `http://127.0.0.1:${port}`,
    calls: (path) => calls.get(path) ?? 0,
    cancels: (path) => cancels.get(path) ?? 0,
    heard: (path) => [...(heardBy.get(path) ?? [])],
    cancelledHeard: (path) => [...(cancelledBy.get(path) ?? [])],
    lastHeaders: (path) => headers.get(path),
    release: () => {
      released = true;
      for (const r of waiting.splice(0)) r();
    },
    hold: () => {
      released = false;
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Answers one JSON-RPC request with the SDK's transport handler: JSON, or server-sent events for a stream. */
async function answerRpc(handler: JsonRpcTransportHandler, body: unknown, res: ServerResponse): Promise<void> {
  const context = new ServerCallContext({ requestedVersion: '1.0' });
  const request = typeof body === 'object' && body !== null ? { ...body } : {};
  const out = await handler.handle(request, context);
  if (Symbol.asyncIterator in out) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    try {
      for await (const event of out) {
        if (res.destroyed) break;
        res.write(`data: ${JSON.stringify(event)}\n\n`);
      }
    } finally {
      res.end();
    }
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
}

interface ExecutorOptions {
  readonly name: string;
  /** Resolves when a held task may finish; `null`: never held. */
  readonly hold: (() => Promise<void>) | null;
  /** Told the last line of each message a task starts with. */
  readonly onHeard: (line: string) => void;
  /** Told the last line of the message of each task that is cancelled. */
  readonly onCancelled: (line: string) => void;
  readonly fail: boolean;
}

function textExecutor(options: ExecutorOptions): AgentExecutor {
  const cancelled = new Set<string>();
  const lines = new Map<string, string>();
  return {
    async execute(ctx: RequestContext, bus: ExecutionEventBus) {
      const { taskId, contextId } = ctx;
      const heard = lastLine(ctx.userMessage);
      lines.set(taskId, heard);
      options.onHeard(heard);
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined },
          artifacts: [],
          history: [ctx.userMessage],
          metadata: undefined,
        }),
      );
      if (options.hold !== null) await options.hold();
      if (cancelled.has(taskId)) return;
      if (options.fail) {
        bus.publish(status(taskId, contextId, TaskState.TASK_STATE_FAILED, 'the remote broke'));
        bus.finished();
        return;
      }
      const answer = `${options.name} heard: ${heard}`;
      const half = Math.ceil(answer.length / 2);
      for (const [i, chunk] of [answer.slice(0, half), answer.slice(half)].entries()) {
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId,
            contextId,
            artifact: {
              artifactId: 'answer',
              name: 'answer',
              description: '',
              parts: [textPart(chunk)],
              metadata: undefined,
              extensions: [],
            },
            append: i > 0,
            lastChunk: i === 1,
            metadata: undefined,
          }),
        );
      }
      bus.publish(status(taskId, contextId, TaskState.TASK_STATE_COMPLETED, ''));
      bus.finished();
    },
    cancelTask(taskId: string, bus: ExecutionEventBus) {
      cancelled.add(taskId);
      options.onCancelled(lines.get(taskId) ?? '');
      bus.publish(status(taskId, '', TaskState.TASK_STATE_CANCELED, ''));
      bus.finished();
      return Promise.resolve();
    },
  };
}

function status(
  taskId: string,
  contextId: string,
  state: TaskState,
  text: string,
): ReturnType<typeof AgentEvent.statusUpdate> {
  return AgentEvent.statusUpdate({
    taskId,
    contextId,
    status: { state, message: text === '' ? undefined : textMessage(text), timestamp: undefined },
    metadata: undefined,
  });
}

function textPart(text: string): Message['parts'][number] {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' };
}

function textMessage(text: string): Message {
  return {
    messageId: `m-${text.length}`,
    contextId: '',
    taskId: '',
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function lastLine(message: Message): string {
  const text = message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('\n');
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return lines.at(-1) ?? '';
}

function cardOf(name: string): AgentCard {
  return textAgentCard({ name, description: 'answers what it heard', url: 'http://127.0.0.1/agent', version: '1.0.0' });
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return {};
  }
}

function methodOf(body: unknown): string {
  const m: unknown = typeof body === 'object' && body !== null ? Reflect.get(body, 'method') : undefined;
  return typeof m === 'string' ? m : '';
}

function idOf(body: unknown): unknown {
  return typeof body === 'object' && body !== null ? Reflect.get(body, 'id') : null;
}
