/**
 * A small A2A agent for trying remote agents out: an A2A server (JSON-RPC, streaming) on node:http, built with
 * `@a2a-js/sdk`, whose agent answers `echo: <the last line it was sent>`, streamed in two chunks. It asks callers for
 * `Authorization: Bearer <ECHO_TOKEN>` when ECHO_TOKEN is set.
 *
 *   node --import tsx agent-runner/demo/a2a-echo.ts [port]     # default 9999; serves http://127.0.0.1:<port>/a2a
 */
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
  type AgentExecutor,
} from '@a2a-js/sdk/server';
import { TaskState } from '@a2a-js/sdk';
import { textAgentCard } from '../src/a2a/card.js';
import { createServer, type IncomingMessage } from 'node:http';

const port = Number(process.argv[2] ?? '9999');
const token = process.env['ECHO_TOKEN'] ?? '';

const echo: AgentExecutor = {
  execute: (ctx, bus) => {
    const { taskId, contextId } = ctx;
    const text = ctx.userMessage.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('\n');
    const answer = `echo: ${
      text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .at(-1) ?? ''
    }`;
    const status = (state: TaskState) => ({ state, message: undefined, timestamp: new Date().toISOString() });
    bus.publish(
      AgentEvent.task({
        id: taskId,
        contextId,
        status: status(TaskState.TASK_STATE_WORKING),
        artifacts: [],
        history: [],
        metadata: undefined,
      }),
    );
    const half = Math.ceil(answer.length / 2);
    [answer.slice(0, half), answer.slice(half)].forEach((chunk, i) => {
      const part = {
        content: { $case: 'text' as const, value: chunk },
        metadata: undefined,
        filename: '',
        mediaType: '',
      };
      const artifact = {
        artifactId: 'answer',
        name: 'answer',
        description: '',
        parts: [part],
        metadata: undefined,
        extensions: [],
      };
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact,
          append: i > 0,
          lastChunk: i === 1,
          metadata: undefined,
        }),
      );
    });
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: status(TaskState.TASK_STATE_COMPLETED),
        metadata: undefined,
      }),
    );
    bus.finished();
    return Promise.resolve();
  },
  cancelTask: (taskId, bus) => {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: '',
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: undefined },
        metadata: undefined,
      }),
    );
    bus.finished();
    return Promise.resolve();
  },
};

const url = `http://127.0.0.1:${port}/a2a`;
const card = textAgentCard({
  name: 'echo',
  description: 'Repeats the last line it was sent.',
  url,
  version: '1.0.0',
});
const rpc = new JsonRpcTransportHandler(new DefaultRequestHandler(card, new InMemoryTaskStore(), echo));

async function bodyOf(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(Buffer.from(chunk as Uint8Array));
  const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  return typeof parsed === 'object' && parsed !== null ? { ...parsed } : {};
}

createServer((req, res) => {
  if (req.url === '/.well-known/agent-card.json') {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(card));
    return;
  }
  if (req.method !== 'POST' || req.url !== '/a2a') return void res.writeHead(404).end();
  if (token !== '' && req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end();
  void (async () => {
    const out = await rpc.handle(await bodyOf(req), new ServerCallContext({ requestedVersion: '1.0' }));
    if (!(Symbol.asyncIterator in out)) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for await (const event of out) res.write(`data: ${JSON.stringify(event)}\n\n`);
    res.end();
  })().catch(() => {
    if (!res.headersSent) res.writeHead(400);
    res.end();
  });
}).listen(port, '127.0.0.1', () => process.stdout.write(`A2A echo agent on ${url}\n`));
