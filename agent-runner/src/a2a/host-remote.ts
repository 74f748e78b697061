import type { LanguageModelV3 } from '@ai-sdk/provider';
import type { Cancellations } from './cancellations.js';
import { RunnerConfigError, resolveFrom } from '../config.js';
import { A2aHeaderError, resolveHeaders, type A2aConfig } from './options.js';
import { createRemoteAgentModel } from './remote-model.js';

/** What building a remote agent's model needs of the runner. */
export interface RemoteHostOptions {
  /** The config file's folder: `{ file }` header paths resolve against it. */
  readonly baseDir: string;
  readonly env: NodeJS.ProcessEnv;
  /** Told each remote task's id once the agent names it. */
  readonly onTask?: (agent: string, taskId: string) => void;
  /** Told when a remote task could not be cancelled. */
  readonly onCancelFailed?: (agent: string, err: unknown) => void;
  /** Where the `CancelTask` requests go, for the runner to wait for them before it exits. */
  readonly cancellations?: Cancellations;
}

/** The model of an `a2a` agent, its headers read from the environment and files now (a missing one: exit 2). */
export async function remoteAgentModel(
  name: string,
  config: A2aConfig,
  options: RemoteHostOptions,
): Promise<LanguageModelV3> {
  let headers: Record<string, string>;
  try {
    headers = await resolveHeaders(config.headers, {
      env: options.env,
      resolvePath: (path) => resolveFrom(options.baseDir, path),
    });
  } catch (err) {
    if (err instanceof A2aHeaderError) throw new RunnerConfigError(`agent ${name}: ${err.message}`, { cause: err });
    throw err;
  }
  const { onTask, onCancelFailed, cancellations } = options;
  return createRemoteAgentModel({
    url: config.url,
    headers,
    timeoutMs: config.timeout_ms,
    maxAnswerBytes: config.max_answer_bytes,
    ...(onTask === undefined ? {} : { onTask: (taskId: string) => onTask(name, taskId) }),
    ...(onCancelFailed === undefined ? {} : { onCancelFailed: (err: unknown) => onCancelFailed(name, err) }),
    ...(cancellations === undefined ? {} : { onCancel: (sent: Promise<void>) => cancellations.track(sent) }),
  });
}
