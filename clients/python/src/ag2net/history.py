"""A channel whose history expired: the hub's history retention (`hub-service --retain-closed`) removed its log.

Its metadata stays readable and carries `expired_at`; `read_wal` and `adapter_state` of it raise `NotFoundError` with
`details` `{"reason": "expired", "channel_id", "expired_at"}` (to its participants and the operator only).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import NotFoundError
from .models import ChannelMetadata

#: `details.reason` of the `not_found` a read of a channel whose history expired answers (`ErrorReason.HistoryExpired`).
HISTORY_EXPIRED = "expired"


class HistoryExpiredDetails(BaseModel):
    """`details` of that `not_found`: which channel, and when its history expired (`closed_at` + the retention)."""

    model_config: ClassVar[ConfigDict] = ConfigDict(extra="allow")
    reason: Literal["expired"]
    channel_id: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_-]+$")
    expired_at: AwareDatetime

    @field_validator("expired_at", mode="before")
    @classmethod
    def _iso_string(cls, value: Any) -> Any:
        # The wire carries an ISO-8601 string; pydantic would also take a number of seconds, which no hub sends.
        if not isinstance(value, str):
            raise ValueError("expected an ISO-8601 timestamp")
        return value


def history_expired_details(err: BaseException) -> HistoryExpiredDetails | None:
    """The checked `details` of a `NotFoundError` that says the channel's history expired; `None` for any other
    error (a channel that does not exist or that the caller may not see, another code, details that do not parse)."""
    if not isinstance(err, NotFoundError) or err.details is None:
        return None
    try:
        return HistoryExpiredDetails.model_validate(err.details)
    except ValidationError:
        return None


def history_expired(value: BaseException | ChannelMetadata) -> datetime | None:
    """When the channel's history expired (an aware `datetime`), read from either what says so: the `NotFoundError` a
    read of its history raised, or its metadata (`get_channel`, `list_channels`). `None` when the history is kept, for
    metadata without `expired_at` (an older hub's), and for any other error.

    Example::

        try:
            envelopes = await human.read_wal(channel_id)
        except NotFoundError as err:
            if (when := history_expired(err)) is None:
                raise
            print(f"the history expired at {when:%Y-%m-%d %H:%M} UTC")
    """
    if isinstance(value, ChannelMetadata):
        return None if value.expired_at is None else datetime.fromisoformat(value.expired_at)
    details = history_expired_details(value)
    return None if details is None else details.expired_at
