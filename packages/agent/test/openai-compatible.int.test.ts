import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tool } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, createModel } from '../src/index.js';

/** A fake OpenAI-compatible endpoint: answers each `/chat/completions` call with the next canned completion. */
async function fakeEndpoint(
  completions: readonly object[],
): Promise<{ url: string; bodies: unknown[]; paths: string[]; server: Server }> {
  const bodies: unknown[] = [];
  const paths: string[] = [];
  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      paths.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      bodies.push(JSON.parse(body));
      const completion = completions[bodies.length - 1];
      res.writeHead(completion === undefined ? 500 : 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completion ?? { error: { message: 'no more completions' } }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1`, bodies, paths, server };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
const toolCallCompletion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1767225600,
  model: 'test-model',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_abc', type: 'function', function: { name: 'capital', arguments: '{"country":"France"}' } },
        ],
      },
      finish_reason: 'tool_calls',
    },
  ],
  usage,
};
const answerCompletion = {
  id: 'chatcmpl-2',
  object: 'chat.completion',
  created: 1767225601,
  model: 'test-model',
  choices: [
    { index: 0, message: { role: 'assistant', content: 'The capital of France is Paris.' }, finish_reason: 'stop' },
  ],
  usage,
};

let server: Server | null = null;
afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = null;
});

describe('OpenAI-compatible provider over HTTP', () => {
  it('sends the tools, runs the tool call the endpoint asks for, sends its result back and returns the answer', async () => {
    const endpoint = await fakeEndpoint([toolCallCompletion, answerCompletion]);
    server = endpoint.server;
    const model = createModel({
      provider: 'openai-compatible',
      model: 'test-model',
      baseURL: endpoint.url,
      apiKey: 'sk-test',
    });
    const capital = tool({
      description: 'The capital of a country.',
      inputSchema: z.object({ country: z.string() }),
      execute: ({ country }) => (country === 'France' ? 'Paris' : 'unknown'),
    });
    const agent = new Agent({ name: 'geo', instructions: 'Answer briefly.', model, tools: { capital } });

    const result = await agent.ask('What is the capital of France?');

    expect(result).toEqual({
      text: 'The capital of France is Paris.',
      events: [
        { type: 'tool_call', callId: 'call_abc', name: 'capital', arguments: '{"country":"France"}' },
        { type: 'tool_result', callId: 'call_abc', result: 'Paris' },
      ],
      // Two completions of 10 prompt and 5 completion tokens each, summed over the turn.
      usage: { inputTokens: 20, outputTokens: 10 },
      usageReported: true,
      attempts: 2,
      retries: 0,
      toolCalls: 1,
    });
    expect(endpoint.paths).toEqual([
      'POST /v1/chat/completions Bearer sk-test',
      'POST /v1/chat/completions Bearer sk-test',
    ]);
    const tools = [
      {
        type: 'function',
        function: {
          name: 'capital',
          description: 'The capital of a country.',
          parameters: {
            $schema: 'http://json-schema.org/draft-07/schema#',
            type: 'object',
            properties: { country: { type: 'string' } },
            required: ['country'],
            additionalProperties: false,
          },
        },
      },
    ];
    const system = { role: 'system', content: 'Answer briefly.' };
    const question = { role: 'user', content: 'What is the capital of France?' };
    expect(endpoint.bodies).toEqual([
      { model: 'test-model', messages: [system, question], tools, tool_choice: 'auto' },
      {
        model: 'test-model',
        messages: [
          system,
          question,
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_abc', type: 'function', function: { name: 'capital', arguments: '{"country":"France"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_abc', content: 'Paris' },
        ],
        tools,
        tool_choice: 'auto',
      },
    ]);
  });
});
