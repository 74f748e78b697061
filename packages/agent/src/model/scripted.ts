import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3GenerateResult,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Text,
  LanguageModelV3ToolCall,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import { ScriptStepSchema, type ScriptStep, type ScriptStepInput } from './script.js';

/**
 * A deterministic language model that answers from a script: each call takes the next step (a reply or tool
 * calls) with one cursor across every turn, and answers `""` once the script is exhausted, so that exchanges
 * driven by default handlers halt (an empty reply posts nothing); with `loop` it starts the script over instead,
 * so an agent keeps answering. A real AI SDK `LanguageModelV3`, for tests and the offline demo.
 */
export interface ScriptedModel extends LanguageModelV3 {
  /** Every call the model received, in order (prompt, tools, settings). */
  readonly calls: readonly LanguageModelV3CallOptions[];
  /** Steps not yet used in this pass through the script. */
  readonly remaining: number;
}

/** Options of `createScriptedModel`. */
export interface ScriptedModelOptions {
  /** The model id reported to the AI SDK; default `scripted`. */
  readonly modelId?: string;
  /**
   * Start the script over once it is used up, instead of answering `""`: an agent that keeps answering after its
   * scripted exchange (the offline demo's agents, which people talk to after the demo). Default false.
   */
  readonly loop?: boolean;
}

/** A scripted model over `script` (validated; throws a `ZodError` on a malformed step). */
export function createScriptedModel(
  script: readonly ScriptStepInput[],
  options: ScriptedModelOptions = {},
): ScriptedModel {
  return new ScriptedLanguageModel(
    script.map((s) => ScriptStepSchema.parse(s)),
    {
      modelId: options.modelId ?? 'scripted',
      loop: options.loop ?? false,
    },
  );
}

const ZERO_USAGE: LanguageModelV3Usage = Object.freeze({
  inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 0, text: 0, reasoning: 0 },
});

class ScriptedLanguageModel implements ScriptedModel {
  readonly specificationVersion = 'v3';
  readonly provider = 'ag2net.scripted';
  readonly supportedUrls = {};
  readonly calls: LanguageModelV3CallOptions[] = [];
  readonly modelId: string;
  readonly #script: readonly ScriptStep[];
  readonly #loop: boolean;
  #cursor = 0;
  #callIds = 0;

  constructor(script: readonly ScriptStep[], options: { readonly modelId: string; readonly loop: boolean }) {
    this.#script = script;
    this.modelId = options.modelId;
    this.#loop = options.loop;
  }

  get remaining(): number {
    return this.#script.length - this.#cursor;
  }

  doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    const content = this.#next(options);
    return Promise.resolve({ content, finishReason: finishReasonOf(content), usage: ZERO_USAGE, warnings: [] });
  }

  doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    const content = this.#next(options);
    const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }];
    content.forEach((part, i) => {
      if (part.type === 'text') {
        const id = `text-${i}`;
        parts.push({ type: 'text-start', id }, { type: 'text-delta', id, delta: part.text }, { type: 'text-end', id });
      } else {
        parts.push(part);
      }
    });
    parts.push({ type: 'finish', usage: ZERO_USAGE, finishReason: finishReasonOf(content) });
    const stream = new ReadableStream<LanguageModelV3StreamPart>({
      start(controller) {
        for (const part of parts) controller.enqueue(part);
        controller.close();
      },
    });
    return Promise.resolve({ stream });
  }

  #next(options: LanguageModelV3CallOptions): (LanguageModelV3Text | LanguageModelV3ToolCall)[] {
    options.abortSignal?.throwIfAborted();
    this.calls.push(options);
    if (this.#loop && this.#cursor >= this.#script.length) this.#cursor = 0;
    const step = this.#script[this.#cursor];
    if (step === undefined) return [{ type: 'text', text: '' }];
    this.#cursor += 1;
    if (typeof step === 'string') return [{ type: 'text', text: step }];
    const calls = Array.isArray(step) ? step : [step];
    return calls.map((call): LanguageModelV3ToolCall => {
      this.#callIds += 1;
      return {
        type: 'tool-call',
        toolCallId: `call_${this.#callIds}`,
        toolName: call.tool,
        input: JSON.stringify(call.args),
      };
    });
  }
}

function finishReasonOf(content: readonly LanguageModelV3Content[]): LanguageModelV3FinishReason {
  const calls = content.some((c) => c.type === 'tool-call');
  return { unified: calls ? 'tool-calls' : 'stop', raw: calls ? 'tool_calls' : 'stop' };
}
