import { describe, expect, it } from 'vitest';
import {
  ChannelEndDataSchema,
  ChannelRefDataSchema,
  ContextSetDataSchema,
  ContextUpdatesSchema,
  EVENT_DATA_SCHEMAS,
  ExpectationViolatedDataSchema,
  InviteDataSchema,
  InviteRejectDataSchema,
  PacketDataSchema,
  PacketRoutingSchema,
  TaskCancelDataSchema,
  TurnFailedDataSchema,
  TurnReportSchema,
  TextDataSchema,
  failureCauseLine,
} from '@ag2net/protocol';
import { turnReportFixture } from '@ag2net/test-support';

describe('EVENT_DATA_SCHEMAS', () => {
  it('has a schema for exactly the 12 EV_* types, each the right one', () => {
    expect(EVENT_DATA_SCHEMAS).toStrictEqual({
      'ag2.msg.text': TextDataSchema,
      'ag2.packet': PacketDataSchema,
      'ag2.channel.invite': InviteDataSchema,
      'ag2.channel.invite.ack': ChannelRefDataSchema,
      'ag2.channel.invite.reject': InviteRejectDataSchema,
      'ag2.channel.opened': ChannelRefDataSchema,
      'ag2.channel.closed': ChannelEndDataSchema,
      'ag2.channel.expired': ChannelEndDataSchema,
      'ag2.expectation.violated': ExpectationViolatedDataSchema,
      'ag2.context.set': ContextSetDataSchema,
      'ag2.task.cancel_request': TaskCancelDataSchema,
      'ag2.task.cancelled': TaskCancelDataSchema,
      'ag2.turn.failed': TurnFailedDataSchema,
    });
    expect(Object.keys(EVENT_DATA_SCHEMAS)).toHaveLength(13);
    expect(Object.isFrozen(EVENT_DATA_SCHEMAS)).toBe(true);
  });
});

describe('TextData', () => {
  it('rejects event data without text', () => {
    const result = TextDataSchema.safeParse({});
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path)).toEqual([['text']]);
  });

  it('keeps keys beyond text', () => {
    expect(TextDataSchema.parse({ text: 'hi', format: 'markdown' })).toStrictEqual({ text: 'hi', format: 'markdown' });
  });
});

describe('context updates', () => {
  it('default to nothing to set and nothing to delete', () => {
    expect(ContextUpdatesSchema.parse({})).toStrictEqual({ set: {}, delete: [] });
    expect(ContextSetDataSchema.parse({ set: { stage: 'review' } })).toStrictEqual({
      set: { stage: 'review' },
      delete: [],
    });
  });
});

describe('PacketData', () => {
  it('accepts a packet with every field optional', () => {
    expect(PacketDataSchema.parse({})).toStrictEqual({});
  });

  it('fills context_updates defaults inside a packet', () => {
    expect(PacketDataSchema.parse({ routing: { kind: 'text' }, context_updates: {}, body: 'b' })).toStrictEqual({
      routing: { kind: 'text' },
      context_updates: { set: {}, delete: [] },
      body: 'b',
    });
  });

  it('routes on kind text, handoff or finish and rejects any other kind', () => {
    expect(PacketRoutingSchema.parse({ kind: 'handoff', target: 'bob', tool: 't' })).toStrictEqual({
      kind: 'handoff',
      target: 'bob',
      tool: 't',
    });
    expect(PacketRoutingSchema.parse({ kind: 'finish', summary: 's' }).kind).toBe('finish');
    expect(PacketRoutingSchema.safeParse({ kind: 'teleport' }).success).toBe(false);
    expect(PacketRoutingSchema.safeParse({ target: 'bob' }).success).toBe(false);
  });
});

describe('channel event data', () => {
  it('requires all six invite fields', () => {
    const invite = {
      channel_id: 'c1',
      manifest_type: 'consulting',
      manifest_version: 1,
      creator_id: 'alice',
      knobs: {},
      labels: { intent: 'review' },
    };
    expect(InviteDataSchema.parse(invite)).toStrictEqual(invite);
    for (const key of Object.keys(invite)) {
      const partial: Record<string, unknown> = { ...invite };
      delete partial[key];
      expect(InviteDataSchema.safeParse(partial).success, key).toBe(false);
    }
  });

  it('requires reason and channel_id on close and expiry', () => {
    expect(ChannelEndDataSchema.safeParse({ reason: 'done', channel_id: 'c1' }).success).toBe(true);
    expect(ChannelEndDataSchema.safeParse({ channel_id: 'c1' }).success).toBe(false);
    expect(ChannelEndDataSchema.safeParse({ reason: 'done' }).success).toBe(false);
  });

  it('takes free-form reject data and an optional channel id on ack and opened', () => {
    expect(InviteRejectDataSchema.parse({ reason: 'busy', extra: 1 })).toStrictEqual({ reason: 'busy', extra: 1 });
    expect(ChannelRefDataSchema.parse({})).toStrictEqual({});
    expect(ChannelRefDataSchema.safeParse({ channel_id: 'a.b' }).success).toBe(false);
  });

  it('requires expectation, violators and detail on a violation', () => {
    expect(
      ExpectationViolatedDataSchema.safeParse({ expectation: 'reply_within', violators: ['bob'], detail: {} }).success,
    ).toBe(true);
    expect(ExpectationViolatedDataSchema.safeParse({ expectation: 'reply_within', violators: ['bob'] }).success).toBe(
      false,
    );
  });
});

describe('TaskCancelData', () => {
  it("defaults reason to ''", () => {
    expect(TaskCancelDataSchema.parse({ task_id: 't1' })).toStrictEqual({ task_id: 't1', reason: '' });
  });

  it('requires task_id', () => {
    expect(TaskCancelDataSchema.safeParse({ reason: 'x' }).success).toBe(false);
  });
});

describe('TurnFailedData', () => {
  const ag2 = {
    agent_name: 'expert',
    reason: 'the model could not be reached after 3 attempts',
    code: 'model_unavailable',
  };

  it('takes AG2’s three fields alone', () => {
    expect(TurnFailedDataSchema.parse(ag2)).toStrictEqual(ag2);
  });

  it('carries the cause, the attempts and the model, and keeps unknown fields at both levels', () => {
    const data = {
      ...ag2,
      cause: {
        kind: 'connection',
        exc_type: 'APICallError',
        code: 'ECONNREFUSED',
        message: 'ECONNREFUSED 127.0.0.1:9',
        hint: 'is the server running?',
      },
      attempts: 3,
      provider: 'openai-compatible',
      model: 'llama3.2',
      trace: 'kept',
    };
    expect(TurnFailedDataSchema.parse(data)).toStrictEqual(data);
    const http = {
      ...ag2,
      cause: { kind: 'http', status: 401, code: 'invalid_api_key', message: 'Incorrect API key' },
    };
    expect(TurnFailedDataSchema.parse(http)).toStrictEqual(http);
  });

  it('refuses a cause without kind and fields out of their bounds', () => {
    const refused = (extra: Record<string, unknown>): string[] => {
      const result = TurnFailedDataSchema.safeParse({ ...ag2, ...extra });
      return result.success ? [] : result.error.issues.map((issue) => issue.path.join('.'));
    };
    expect(refused({ cause: { message: 'x' } })).toEqual(['cause.kind']);
    expect(refused({ cause: { kind: 'http', status: 99 } })).toEqual(['cause.status']);
    expect(refused({ cause: { kind: 'http', status: 401.5 } })).toEqual(['cause.status']);
    expect(refused({ cause: { kind: 'http', message: 'm'.repeat(301) } })).toEqual(['cause.message']);
    expect(refused({ cause: { kind: 'k'.repeat(65) } })).toEqual(['cause.kind']);
    expect(refused({ attempts: 0 })).toEqual(['attempts']);
    expect(refused({ model: '' })).toEqual(['model']);
    expect(refused({ provider: 'p'.repeat(129) })).toEqual(['provider']);
    expect(refused({ cause: { kind: 'http', message: 'm'.repeat(300) } })).toEqual([]);
  });
});

describe('TurnReport', () => {
  const report = turnReportFixture();

  it('rides in the turn of a text and of a packet, beside what AG2 reads', () => {
    expect(TextDataSchema.parse({ text: 'hi', turn: report })).toStrictEqual({ text: 'hi', turn: report });
    expect(PacketDataSchema.parse({ body: 'b', turn: report })).toStrictEqual({ body: 'b', turn: report });
  });

  it('needs only the start, the duration, the model and the attempts, and keeps unknown fields', () => {
    const { usage: _usage, retries: _retries, tool_calls: _calls, ...minimal } = report;
    expect(TurnReportSchema.parse(minimal)).toStrictEqual(minimal);
    const extended = { ...report, usage: { ...report.usage, cached_tokens: 3 }, region: 'eu' };
    expect(TurnReportSchema.parse(extended)).toStrictEqual(extended);
  });

  it('refuses missing fields and every field out of its bounds', () => {
    const refused = (extra: Record<string, unknown>): string[] => {
      const result = TextDataSchema.safeParse({ text: 'hi', turn: { ...report, ...extra } });
      return result.success ? [] : result.error.issues.map((issue) => issue.path.join('.'));
    };
    expect(refused({ started_at: undefined })).toEqual(['turn.started_at']);
    expect(refused({ started_at: '2026-03-02 09:15' })).toEqual(['turn.started_at']);
    expect(refused({ duration_ms: -1 })).toEqual(['turn.duration_ms']);
    expect(refused({ duration_ms: 86_400_001 })).toEqual(['turn.duration_ms']);
    expect(refused({ duration_ms: 86_400_000 })).toEqual([]);
    expect(refused({ provider: '' })).toEqual(['turn.provider']);
    expect(refused({ model: 'm'.repeat(257) })).toEqual(['turn.model']);
    expect(refused({ usage: { input_tokens: 1.5, output_tokens: 0 } })).toEqual(['turn.usage.input_tokens']);
    expect(refused({ usage: { input_tokens: 0, output_tokens: 1_000_000_001 } })).toEqual(['turn.usage.output_tokens']);
    expect(refused({ usage: { input_tokens: 1 } })).toEqual(['turn.usage.output_tokens']);
    expect(refused({ attempts: 0 })).toEqual(['turn.attempts']);
    expect(refused({ retries: -1 })).toEqual(['turn.retries']);
    expect(refused({ tool_calls: 1001 })).toEqual(['turn.tool_calls']);
    expect(TextDataSchema.safeParse({ text: 'hi', turn: 'fast' }).success).toBe(false);
  });
});

describe('failureCauseLine', () => {
  it('puts status and code before the message, once', () => {
    expect(failureCauseLine({ kind: 'http', status: 401, code: 'invalid_api_key', message: 'Incorrect API key' })).toBe(
      '401 invalid_api_key: Incorrect API key',
    );
    expect(failureCauseLine({ kind: 'connection', code: 'ECONNREFUSED', message: 'ECONNREFUSED 127.0.0.1:9' })).toBe(
      'ECONNREFUSED 127.0.0.1:9',
    );
    expect(failureCauseLine({ kind: 'http', status: 500 })).toBe('500');
    expect(failureCauseLine({ kind: 'timeout', message: 'no answer within 30 s' })).toBe('no answer within 30 s');
    expect(failureCauseLine({ kind: 'error' })).toBe('error');
  });
});
