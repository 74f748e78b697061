import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  EnvelopeSchema,
  ErrorReason,
  HUB_OPS,
  RETRYABLE_ERROR_CODES,
  UnknownHubError,
  encodeAg2Envelope,
  errorFromWire,
  isFinalError,
  mayResend,
  PartSchema,
  ensureParts,
  replyEnvelopeId,
  textData,
  type Rendered,
} from '../src/index.js';

// The cross-language fixtures in conformance/fixtures: every client (TypeScript here, Python in clients/python)
// checks itself against the same files, so their wire behaviour cannot drift apart.
const FIXTURES = fileURLToPath(new URL('../../../conformance/fixtures/', import.meta.url));

function fixture<T>(name: string, schema: z.ZodType<T>): T {
  return schema.parse(JSON.parse(readFileSync(`${FIXTURES}${name}`, 'utf8')));
}

const ReplyIdCases = z.array(z.object({ agent_id: z.string(), trigger_id: z.string(), reply_id: z.string() }));
const HubOpsFixture = z.record(z.string(), z.object({ caller: z.boolean(), idempotent: z.boolean() }));
const Resend = z.object({ idempotent: z.boolean(), not_idempotent: z.boolean() });
const ErrorsFixture = z.object({
  wire: z.array(
    z.object({ wire: z.unknown(), code: z.string(), known: z.boolean(), malformed: z.boolean().optional() }),
  ),
  retryable_codes: z.array(z.string()),
  may_have_applied_reason: z.string(),
  retry: z.array(z.object({ name: z.string(), wire: z.unknown(), resend: Resend, retry_turn: z.boolean() })),
  retry_local: z.array(z.object({ name: z.string(), resend: Resend.optional(), retry_turn: z.boolean() })),
});
const EnvelopesFixture = z.object({
  valid: z.array(z.object({ name: z.string(), json: z.record(z.string(), z.unknown()), ag2_json: z.string() })),
  invalid: z.array(z.object({ name: z.string(), json: z.record(z.string(), z.unknown()) })),
});

const PartsFixture = z.object({
  ensure_parts: z.array(z.object({ name: z.string(), content: z.unknown(), parts: z.array(z.unknown()) })),
  text_data: z.array(
    z.object({ name: z.string(), content: z.unknown(), event_data: z.record(z.string(), z.unknown()) }),
  ),
  invalid_parts: z.array(z.object({ name: z.string(), part: z.unknown() })),
});

describe('conformance fixtures (TypeScript side)', () => {
  it('normalises, renders and refuses parts as parts.json says', () => {
    const { ensure_parts, text_data, invalid_parts } = fixture('parts.json', PartsFixture);
    expect([ensure_parts.length, text_data.length, invalid_parts.length]).toEqual([5, 4, 5]);
    // The fixture's contents are JSON; as `Rendered` they are what a caller passes.
    for (const c of ensure_parts)
      expect([c.name, ensureParts(c.content as Rendered | null)]).toEqual([c.name, c.parts]);
    for (const c of text_data) expect([c.name, textData(c.content as Rendered)]).toEqual([c.name, c.event_data]);
    for (const c of invalid_parts) expect([c.name, PartSchema.safeParse(c.part).success]).toEqual([c.name, false]);
  });

  it('derives every reply id of reply-ids.json', () => {
    const cases = fixture('reply-ids.json', ReplyIdCases);
    expect(cases.length).toBe(8);
    for (const c of cases) expect(replyEnvelopeId(c.agent_id, c.trigger_id)).toBe(c.reply_id);
  });

  it('declares exactly the operations of hub-ops.json, with their caller and idempotent flags', () => {
    const ops = fixture('hub-ops.json', HubOpsFixture);
    const declared = Object.fromEntries(
      Object.entries(HUB_OPS).map(([op, spec]) => [op, { caller: spec.caller, idempotent: spec.idempotent }]),
    );
    expect(declared).toEqual(ops);
  });

  it('rebuilds each wire error of errors.json with its code, keeping unknown codes', () => {
    const { wire, retryable_codes } = fixture('errors.json', ErrorsFixture);
    expect([...RETRYABLE_ERROR_CODES]).toEqual(retryable_codes);
    for (const c of wire) {
      const err = errorFromWire(c.wire);
      expect(err.code).toBe(c.code);
      expect(err instanceof UnknownHubError).toBe(!c.known);
      if (c.malformed !== true) expect(err.toWire()).toEqual(c.wire);
    }
  });

  // `retry_local` (no responders, timeouts, local errors) concerns a client's transport and agent runtime, not the
  // protocol: the clients' own tests check it, and run every case through their resend loop and turn path
  // (packages/client/test/conformance-*.ts, clients/python/tests/test_conformance.py).
  it('tells a wire error of errors.json that is sent again from a final one, as the clients retry requests', () => {
    const { retry, may_have_applied_reason } = fixture('errors.json', ErrorsFixture);
    expect(ErrorReason.MayHaveApplied).toBe(may_have_applied_reason);
    expect(retry.length).toBe(13);
    for (const c of retry) {
      const err = errorFromWire(c.wire);
      expect({
        name: c.name,
        idempotent: mayResend(err, { idempotent: true }),
        not_idempotent: mayResend(err, { idempotent: false }),
      }).toEqual({ name: c.name, ...c.resend });
      expect({ name: c.name, retry_turn: !isFinalError(err) }).toEqual({ name: c.name, retry_turn: c.retry_turn });
    }
  });

  it('accepts the valid envelopes and writes them as AG2 does, byte for byte', () => {
    const { valid } = fixture('envelopes.json', EnvelopesFixture);
    expect(valid.map((c) => c.name)).toEqual(['minimal', 'hub-stamped', 'float-as-integer', 'reply-id']);
    for (const c of valid) expect(encodeAg2Envelope(EnvelopeSchema.parse(c.json))).toBe(c.ag2_json);
  });

  it('refuses every invalid envelope', () => {
    const { invalid } = fixture('envelopes.json', EnvelopesFixture);
    expect(invalid.length).toBe(8);
    for (const c of invalid)
      expect({ name: c.name, ok: EnvelopeSchema.safeParse(c.json).success }).toEqual({
        name: c.name,
        ok: false,
      });
  });
});
