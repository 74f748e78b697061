/**
 * The runner's model of a remote A2A agent against a real A2A server (`@a2a-js/sdk` on node:http): a cancelled turn
 * drops the stream and cancels the remote task, and the credentials go to the configured endpoint only.
 */
import { ModelCallError } from '@ag2net/agent';
import type { LanguageModelV3CallOptions } from '@ai-sdk/provider';
import { waitFor } from '@ag2net/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRemoteAgentModel } from '../agent-runner/src/a2a/remote-model.js';
import { startA2aServer, type TestA2aServer } from './support/a2a-server.js';

let server: TestA2aServer;
beforeAll(async () => {
  server = await startA2aServer();
});
afterAll(async () => {
  await server.close();
});

const call = (text: string, abortSignal?: AbortSignal): LanguageModelV3CallOptions => ({
  prompt: [{ role: 'user', content: [{ type: 'text', text }] }],
  ...(abortSignal === undefined ? {} : { abortSignal }),
});

const model = (path: string, onTask?: (taskId: string) => void) =>
  createRemoteAgentModel({
    url: `${server.origin}${path}`,
    headers: { Authorization: 'Bearer t-0123456789' },
    timeoutMs: 20_000,
    maxAnswerBytes: 1024,
    ...(onTask === undefined ? {} : { onTask }),
  });

describe('remote A2A agent model', () => {
  it('answers with the text the agent streamed, sending the configured headers', async () => {
    const result = await model('/agent?name=ada').doGenerate(call('what is a log?'));
    expect(result.content).toEqual([{ type: 'text', text: 'ada heard: what is a log?' }]);
    expect(server.lastHeaders('/agent')?.authorization).toBe('Bearer t-0123456789');
  });

  it('a cancelled turn drops the stream and cancels the remote task', async () => {
    const turn = new AbortController();
    const tasks: string[] = [];
    const answer = model('/gated?name=held', (id) => tasks.push(id)).doGenerate(call('hold on', turn.signal));
    await waitFor(() => tasks.length === 1 || undefined, { timeoutMs: 10_000, what: 'the remote task' });
    const reason = new Error('turn cancelled');
    turn.abort(reason);
    await expect(answer).rejects.toBe(reason);
    await waitFor(() => server.cancels('/gated') === 1 || undefined, { timeoutMs: 10_000, what: 'CancelTask' });
  });

  it('an answer past the bound fails without being kept, as malformed output', async () => {
    const failed = await model('/agent?name=' + 'n'.repeat(2000))
      .doGenerate(call('hi'))
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(failed).toBeInstanceOf(ModelCallError);
    expect(failed instanceof ModelCallError ? [failed.code, failed.detail] : null).toEqual([
      'model_malformed_output',
      { kind: 'malformed_output', exc_type: 'A2aAnswerTooLargeError', code: 'answer_too_large' },
    ]);
  });
});
