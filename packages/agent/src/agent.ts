import type { TurnEvent } from '@ag2net/adapters';
import type { Part } from '@ag2net/protocol';
import type { LanguageModelV3 } from '@ai-sdk/provider';
import { generateText, stepCountIs, type ModelMessage, type SystemModelMessage, type ToolSet } from 'ai';
import { countedModel, countingModelCalls, type ModelCallCount } from './model/meter.js';
import { turnEventsOf } from './turn-events.js';
import { userContent } from './views/messages.js';

/** Default number of model calls one `ask` may make (each tool round trip is one more). */
export const DEFAULT_MAX_STEPS = 10;

/** Options of `new Agent(...)`. */
export interface AgentOptions {
  /** The agent's name; its passport name unless registration says otherwise. */
  readonly name: string;
  /** The system prompt. Default none. */
  readonly instructions?: string;
  /** The AI SDK language model (`createModel(...)`, `modelFromEnv()`, a provider's model, a scripted model). */
  readonly model: LanguageModelV3;
  /** The agent's own tools (AI SDK tools by name), offered on every turn. */
  readonly tools?: ToolSet;
  /** Model calls per `ask`; default `DEFAULT_MAX_STEPS`. */
  readonly maxSteps?: number;
}

/** Options of `ask`. */
export interface AskOptions {
  /** The conversation so far (a view's projection, `toModelMessages`); `system` messages join the system prompt. */
  readonly history?: readonly ModelMessage[];
  /** Tools for this turn only, merged over the agent's own (same name: this one wins). */
  readonly tools?: ToolSet;
  /** System text placed before the instructions (the network's "You are …" line). */
  readonly preamble?: readonly string[];
  readonly signal?: AbortSignal;
}

/** Tokens a turn's model calls used, summed over its steps (0 where the provider reports none). */
export interface TokenUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
}

/**
 * What one turn produced: the final text, the tool calls and results on the way, the tokens used, and how often the
 * model was asked.
 */
export interface AskResult {
  readonly text: string;
  readonly events: readonly TurnEvent[];
  readonly usage: TokenUsage;
  /** Whether the provider reported token counts at all; when it did not, `usage` is zeros. */
  readonly usageReported: boolean;
  /**
   * Requests made to the model: one per step (each tool round trip adds one), retries included — those of a model
   * built by `createModel` and the AI SDK's own.
   */
  readonly attempts: number;
  /** Of `attempts`, those that repeated a request that had failed for a transient reason. */
  readonly retries: number;
  /** Tool calls the model made over the turn. */
  readonly toolCalls: number;
}

/**
 * An LLM agent: a name, instructions, a model and tools. `ask` runs one turn (model calls and tool calls until
 * the model answers in text). Constructing one does no I/O; `registerAgent` puts it on the network.
 */
export class Agent {
  readonly name: string;
  readonly instructions: string;
  readonly model: LanguageModelV3;
  readonly tools: ToolSet;
  readonly maxSteps: number;

  constructor(options: AgentOptions) {
    this.name = options.name;
    this.instructions = options.instructions ?? '';
    this.model = options.model;
    this.tools = options.tools ?? {};
    this.maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  }

  /** Runs one turn on `input` after `history`. Model and transport errors are thrown. */
  async ask(input: string | readonly Part[], options: AskOptions = {}): Promise<AskResult> {
    const history = options.history ?? [];
    const system: SystemModelMessage[] = [
      ...(options.preamble ?? []).map((content): SystemModelMessage => ({ role: 'system', content })),
      ...(this.instructions === '' ? [] : [{ role: 'system' as const, content: this.instructions }]),
      ...history.filter((m): m is SystemModelMessage => m.role === 'system'),
    ];
    const tools = { ...this.tools, ...options.tools };
    const count: ModelCallCount = { attempts: 0, retries: 0 };
    const result = await countingModelCalls(count, () =>
      generateText({
        model: countedModel(this.model, count),
        ...(system.length === 0 ? {} : { system }),
        messages: [
          ...history.filter((m) => m.role !== 'system'),
          { role: 'user', content: typeof input === 'string' ? input : userContent(input) },
        ],
        ...(Object.keys(tools).length === 0 ? {} : { tools }),
        stopWhen: stepCountIs(this.maxSteps),
        ...(options.signal === undefined ? {} : { abortSignal: options.signal }),
      }),
    );
    const { inputTokens, outputTokens } = result.totalUsage;
    return {
      text: result.text,
      events: turnEventsOf(result.steps),
      usage: { inputTokens: inputTokens ?? 0, outputTokens: outputTokens ?? 0 },
      usageReported: inputTokens !== undefined || outputTokens !== undefined,
      attempts: count.attempts,
      retries: count.retries,
      toolCalls: result.steps.reduce((n, step) => n + step.toolCalls.length, 0),
    };
  }
}
