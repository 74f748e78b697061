"""The event types the client acts on itself (the Python side of `@ag2net/protocol`'s `EV_*`)."""

from __future__ import annotations

EV_TEXT = "ag2.msg.text"
EV_CHANNEL_INVITE = "ag2.channel.invite"
EV_CHANNEL_INVITE_ACK = "ag2.channel.invite.ack"
EV_CHANNEL_CLOSED = "ag2.channel.closed"
EV_CHANNEL_EXPIRED = "ag2.channel.expired"
EV_EXPECTATION_VIOLATED = "ag2.expectation.violated"


def is_protocol_event(event_type: str) -> bool:
    """`ag2.channel.*` and `ag2.task.*`: never a turn, and run without the turn lock."""
    return event_type.startswith(("ag2.channel.", "ag2.task."))
