import { TaskState } from '@a2a-js/sdk';
import { z } from 'zod';

/**
 * What the runner reads of the A2A SDK's stream events (`StreamResponse`), checked again here: the SDK converts the
 * endpoint's JSON without validating it, and the endpoint is someone else's. Unknown fields pass; text and data
 * parts are read.
 */
const PartSchema = z.looseObject({
  content: z.looseObject({ $case: z.string(), value: z.unknown() }).optional().nullable(),
});

const MessageSchema = z.looseObject({
  messageId: z.string().max(1024).optional(),
  parts: z.array(PartSchema).max(10_000).default([]),
});

const StatusSchema = z.looseObject({
  // The SDK reads a state it does not know as UNRECOGNIZED (-1), which is one of these.
  state: z.enum(TaskState),
  message: MessageSchema.optional().nullable(),
});

const ArtifactSchema = z.looseObject({
  artifactId: z.string().max(1024).default(''),
  parts: z.array(PartSchema).max(10_000).default([]),
});

const TaskSchema = z.looseObject({
  id: z.string().min(1).max(1024),
  status: StatusSchema.optional().nullable(),
  artifacts: z.array(ArtifactSchema).max(10_000).default([]),
});

/** One event of an A2A stream, as the runner reads it. */
export const StreamEventSchema = z.looseObject({
  payload: z.discriminatedUnion('$case', [
    z.looseObject({ $case: z.literal('message'), value: MessageSchema }),
    z.looseObject({ $case: z.literal('task'), value: TaskSchema }),
    z.looseObject({
      $case: z.literal('statusUpdate'),
      value: z.looseObject({ taskId: z.string().min(1).max(1024), status: StatusSchema.optional().nullable() }),
    }),
    z.looseObject({
      $case: z.literal('artifactUpdate'),
      value: z.looseObject({
        taskId: z.string().min(1).max(1024),
        artifact: ArtifactSchema.optional().nullable(),
        append: z.boolean().default(false),
      }),
    }),
  ]),
});
export type StreamEvent = z.infer<typeof StreamEventSchema>;
type Parts = z.infer<typeof PartSchema>[];
/** A task's status as the runner reads it. */
export type StreamStatus = z.infer<typeof StatusSchema>;

/**
 * The text of `parts`: their text parts, and their data parts as compact JSON (as `partsText` renders a message's
 * data), in order, joined with blank lines; files are left out.
 */
export function textOf(parts: Parts): string {
  const texts: string[] = [];
  for (const part of parts) {
    const content = part.content;
    if (content?.$case === 'text' && typeof content.value === 'string') texts.push(content.value);
    else if (content?.$case === 'data') texts.push(JSON.stringify(content.value ?? null));
  }
  return texts.join('\n\n');
}

/** How a task's state ends a turn: still running, answered, or ended without an answer. */
export type StateOutcome = 'running' | 'answered' | 'ended';

/** What the runner makes of an A2A task state. */
export function outcomeOf(state: TaskState): StateOutcome {
  switch (state) {
    case TaskState.TASK_STATE_COMPLETED:
    // The agent asks something back: that question is its answer in the channel.
    case TaskState.TASK_STATE_INPUT_REQUIRED:
      return 'answered';
    case TaskState.TASK_STATE_FAILED:
    case TaskState.TASK_STATE_CANCELED:
    case TaskState.TASK_STATE_REJECTED:
    case TaskState.TASK_STATE_AUTH_REQUIRED:
      return 'ended';
    default:
      return 'running';
  }
}

/** The A2A name of a state (`TASK_STATE_FAILED`), for causes. */
export function stateName(state: TaskState): string {
  const name: unknown = Reflect.get(TaskState, state);
  return typeof name === 'string' ? name : `TASK_STATE_${state}`;
}

/** The text a status carries (its message's text parts), `''` without one. */
export function statusText(status: StreamStatus | null | undefined): string {
  return status?.message == null ? '' : textOf(status.message.parts);
}
