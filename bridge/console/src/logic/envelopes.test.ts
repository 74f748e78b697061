import { describe, expect, it } from 'vitest';
import { envelopeKind, eventSummary, isPrivate, messageText, packetRouting } from './envelopes.js';

const names: Record<string, string> = { a1: 'triage', b2: 'billing' };
const nameOf = (id: string): string => names[id] ?? id;

describe('envelopeKind', () => {
  it('texts and packets are messages, violations and failed turns are marked, the rest are events', () => {
    expect(envelopeKind('ag2.msg.text')).toBe('message');
    expect(envelopeKind('ag2.packet')).toBe('message');
    expect(envelopeKind('ag2.expectation.violated')).toBe('violation');
    expect(envelopeKind('ag2.turn.failed')).toBe('failure');
    for (const t of [
      'ag2.channel.invite',
      'ag2.channel.invite.ack',
      'ag2.channel.closed',
      'ag2.context.set',
      'x.custom',
    ]) {
      expect(envelopeKind(t), t).toBe('event');
    }
  });
});

describe('eventSummary', () => {
  it('names the violated expectation and the violators', () => {
    const e = {
      event_type: 'ag2.expectation.violated',
      event_data: { expectation: 'turn_within', violators: ['a1', 'b2'], detail: {} },
    };
    expect(eventSummary(e, nameOf)).toBe('turn_within violated by triage, billing');
    expect(eventSummary({ ...e, event_data: { violators: ['a1'] } }, nameOf)).toBe('an expectation violated by triage');
  });

  it("names a failed turn's agent, reason and code", () => {
    const e = {
      event_type: 'ag2.turn.failed',
      event_data: { agent_name: 'billing', reason: 'model timed out', code: 'model_timeout' },
    };
    expect(eventSummary(e, nameOf)).toBe('turn failed for billing: model timed out (model_timeout)');
  });

  it('says protocol events briefly, with their reason', () => {
    expect(
      eventSummary({ event_type: 'ag2.channel.closed', event_data: { reason: 'consulting_complete' } }, nameOf),
    ).toBe('channel closed: consulting_complete');
    expect(eventSummary({ event_type: 'ag2.channel.invite.ack', event_data: {} }, nameOf)).toBe('accepted the invite');
    expect(
      eventSummary({ event_type: 'ag2.context.set', event_data: { set: { tier: 'gold' }, delete: ['x'] } }, nameOf),
    ).toBe('context changed: set tier, deleted x');
    expect(eventSummary({ event_type: 'acme.ping', event_data: {} }, nameOf)).toBe('acme.ping');
    expect(eventSummary({ event_type: 'ag2.channel.invite', event_data: {}, audience: ['b2'] }, nameOf)).toBe(
      'invited billing',
    );
  });
});

describe('messages', () => {
  it("shows a text's text and a packet's body, and reads a handoff", () => {
    expect(messageText({ event_type: 'ag2.msg.text', event_data: { text: 'hello' } })).toBe('hello');
    const handoff = {
      event_type: 'ag2.packet',
      event_data: {
        body: 'over to billing',
        routing: { kind: 'handoff', tool: 'transfer_to_billing', reason: 'charge' },
      },
    };
    expect(messageText(handoff)).toBe('over to billing');
    expect(packetRouting(handoff)).toEqual({ kind: 'handoff', tool: 'transfer_to_billing', reason: 'charge' });
    expect(packetRouting({ event_type: 'ag2.packet', event_data: { routing: { kind: 'text' } } })).toBeNull();
    expect(packetRouting({ event_type: 'ag2.msg.text', event_data: {} })).toBeNull();
  });

  it('an audience that leaves out a participant is private; null or every participant is everyone', () => {
    const participants = ['a1', 'b2', 'c3'];
    expect(isPrivate({ audience: ['b2'], sender_id: 'a1' }, participants)).toBe(true);
    expect(isPrivate({ audience: [], sender_id: 'a1' }, participants)).toBe(true);
    expect(isPrivate({ audience: null, sender_id: 'a1' }, participants)).toBe(false);
    expect(isPrivate({ audience: ['a1', 'b2', 'c3'], sender_id: 'hub' }, participants)).toBe(false);
    expect(isPrivate({ audience: ['b2', 'c3'], sender_id: 'a1' }, participants)).toBe(false);
    // A channel opened or closed: every participant sees it, in any order, whoever posted it.
    expect(isPrivate({ audience: ['c3', 'a1', 'b2'], sender_id: 'a1' }, participants)).toBe(false);
    expect(isPrivate({ audience: ['a1', 'b2', 'c3', 'x9'], sender_id: 'b2' }, participants)).toBe(false);
  });
});
