import { describe, expect, it } from 'vitest';
import {
  CHANNEL_PROTOCOL_EVENTS,
  EV_CHANNEL_CLOSED,
  EV_CHANNEL_EXPIRED,
  EV_CHANNEL_INVITE,
  EV_CHANNEL_INVITE_ACK,
  EV_CHANNEL_INVITE_REJECT,
  EV_CHANNEL_OPENED,
  EV_CONTEXT_SET,
  EV_EXPECTATION_VIOLATED,
  EV_PACKET,
  EV_TASK_CANCEL_REQUEST,
  EV_TASK_CANCELLED,
  EV_TEXT,
  isChannelProtocolEvent,
  isHandshakeReply,
  isProtocolEvent,
  isTaskEvent,
} from '@ag2net/protocol';

describe('EV_* constants', () => {
  it("are AG2's exact strings", () => {
    expect({
      EV_TEXT,
      EV_PACKET,
      EV_CHANNEL_INVITE,
      EV_CHANNEL_INVITE_ACK,
      EV_CHANNEL_INVITE_REJECT,
      EV_CHANNEL_OPENED,
      EV_CHANNEL_CLOSED,
      EV_CHANNEL_EXPIRED,
      EV_EXPECTATION_VIOLATED,
      EV_CONTEXT_SET,
      EV_TASK_CANCEL_REQUEST,
      EV_TASK_CANCELLED,
    }).toStrictEqual({
      EV_TEXT: 'ag2.msg.text',
      EV_PACKET: 'ag2.packet',
      EV_CHANNEL_INVITE: 'ag2.channel.invite',
      EV_CHANNEL_INVITE_ACK: 'ag2.channel.invite.ack',
      EV_CHANNEL_INVITE_REJECT: 'ag2.channel.invite.reject',
      EV_CHANNEL_OPENED: 'ag2.channel.opened',
      EV_CHANNEL_CLOSED: 'ag2.channel.closed',
      EV_CHANNEL_EXPIRED: 'ag2.channel.expired',
      EV_EXPECTATION_VIOLATED: 'ag2.expectation.violated',
      EV_CONTEXT_SET: 'ag2.context.set',
      EV_TASK_CANCEL_REQUEST: 'ag2.task.cancel_request',
      EV_TASK_CANCELLED: 'ag2.task.cancelled',
    });
  });

  it('list the six channel-protocol events in AG2 order, frozen', () => {
    expect(CHANNEL_PROTOCOL_EVENTS).toEqual([
      'ag2.channel.invite',
      'ag2.channel.invite.ack',
      'ag2.channel.invite.reject',
      'ag2.channel.opened',
      'ag2.channel.closed',
      'ag2.channel.expired',
    ]);
    expect(Object.isFrozen(CHANNEL_PROTOCOL_EVENTS)).toBe(true);
  });
});

describe('event classification', () => {
  it('treats every ag2.channel.* type as channel protocol, and nothing else', () => {
    for (const type of CHANNEL_PROTOCOL_EVENTS) expect(isChannelProtocolEvent(type)).toBe(true);
    expect(isChannelProtocolEvent('ag2.channel.custom')).toBe(true);
    for (const type of [EV_TEXT, EV_PACKET, EV_CONTEXT_SET, 'ag2.channelx', 'acme.channel.invite', 'ag2.channel']) {
      expect(isChannelProtocolEvent(type)).toBe(false);
    }
  });

  it('treats every ag2.task.* type as a task event, and nothing else', () => {
    for (const type of [EV_TASK_CANCEL_REQUEST, EV_TASK_CANCELLED, 'ag2.task.started']) {
      expect(isTaskEvent(type)).toBe(true);
    }
    for (const type of ['ag2.tasks.x', 'ag2.task', EV_TEXT, EV_CHANNEL_CLOSED]) expect(isTaskEvent(type)).toBe(false);
  });

  it('counts channel-protocol and task events as protocol events, but not text, packets, context or violations', () => {
    expect(isProtocolEvent(EV_CHANNEL_OPENED)).toBe(true);
    expect(isProtocolEvent(EV_TASK_CANCELLED)).toBe(true);
    for (const type of [EV_TEXT, EV_PACKET, EV_CONTEXT_SET, EV_EXPECTATION_VIOLATED, 'acme.custom']) {
      expect(isProtocolEvent(type)).toBe(false);
    }
  });

  it('counts only ack and reject as handshake replies', () => {
    expect(isHandshakeReply(EV_CHANNEL_INVITE_ACK)).toBe(true);
    expect(isHandshakeReply(EV_CHANNEL_INVITE_REJECT)).toBe(true);
    expect(isHandshakeReply(EV_CHANNEL_INVITE)).toBe(false);
    expect(isHandshakeReply(EV_CHANNEL_OPENED)).toBe(false);
  });
});
