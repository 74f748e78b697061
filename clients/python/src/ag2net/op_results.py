"""Results of hub operations, as the client returns them (pydantic: every answer is checked)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from .partitions import MAX_PARTITIONS


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


class HeldPartition(BaseModel):
    """A partition a hub holds now (`Health.held`), with its lease epoch."""

    partition: int = Field(ge=0)
    epoch: int = Field(ge=0)


class Health(BaseModel):
    """What a hub reports about itself (`health`). `partitions` is how many partitions the deployment's channels are
    spread over (1 from an older hub that does not say); `held` the partitions this hub holds now (none from an older
    hub)."""

    hub_id: str
    role: Literal["active", "standby"]
    epoch: int = Field(ge=0)
    active_channels: int = Field(ge=0)
    registered_agents: int = Field(ge=0)
    adapters_loaded: int = Field(ge=0)
    uptime_seconds: float = Field(ge=0)
    #: WAL messages and KV records this hub skipped because they were not what a hub writes.
    quarantined: int = Field(ge=0)
    #: Deliveries this hub gave up after their retries and parked in the audit trail.
    dead_letters: int = Field(ge=0)
    partitions: int = Field(default=1, ge=1, le=MAX_PARTITIONS)
    held: list[HeldPartition] = Field(default_factory=list, max_length=MAX_PARTITIONS)


class DeliveryLag(BaseModel):
    """How far the hub's delivery lags behind admission (`deliveryLag`): `pending`, WAL messages not yet handed to the
    hub; `ack_pending`, handed to it but not yet fanned out to inboxes; `oldest_pending_age_seconds`, how long ago the
    oldest of those was admitted (`None` when nothing pends)."""

    pending: int = Field(ge=0)
    ack_pending: int = Field(ge=0)
    oldest_pending_age_seconds: float | None = Field(ge=0)
