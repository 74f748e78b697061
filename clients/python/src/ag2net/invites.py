"""Invites: accepting one, and telling one addressed to a participant."""

from __future__ import annotations

from .event_types import EV_CHANNEL_INVITE, EV_CHANNEL_INVITE_ACK
from .models import Envelope
from .participant import Participant


async def ack_invite(participant: Participant, invite: Envelope) -> None:
    """Accepts an invite: posts `ag2.channel.invite.ack` answering it."""
    await participant.send_envelope(
        {
            "channel_id": invite.channel_id,
            "event_type": EV_CHANNEL_INVITE_ACK,
            "event_data": {"channel_id": invite.channel_id},
            "causation_id": invite.envelope_id,
        }
    )


def is_invite_for(participant: Participant, envelope: Envelope) -> bool:
    return envelope.event_type == EV_CHANNEL_INVITE and envelope.sender_id != participant.agent_id
