"""Results of the hub operations a participant makes, as the client returns them."""

from __future__ import annotations

from pydantic import BaseModel


class PendingTurn(BaseModel):
    """A turn the hub expects from the caller (`pendingTurnsFor`): in `channel_id`, answering the envelope
    `triggering_envelope_id` (`None` for a channel's opening turn), expected since `expected_at`."""

    channel_id: str
    triggering_envelope_id: str | None
    expected_at: str | None = None


class PostAck(BaseModel):
    """A post admitted (`post`): the envelope's id, its sequence in the channel's log and when it was admitted."""

    envelope_id: str
    sequence: int
    created_at: str
