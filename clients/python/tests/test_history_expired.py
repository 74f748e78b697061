"""A channel whose history expired: told apart from any other `not_found`, from the error or from the metadata."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from ag2net import (
    ChannelMetadata,
    NotFoundError,
    ProtocolError,
    error_from_wire,
    history_expired,
    history_expired_details,
)

EXPIRED_AT = "2026-01-01T01:00:00.000Z"
WHEN = datetime(2026, 1, 1, 1, 0, tzinfo=UTC)
DETAILS: dict[str, Any] = {"reason": "expired", "channel_id": "c1", "expired_at": EXPIRED_AT}
EXPIRED: dict[str, Any] = {
    "code": "not_found",
    "message": f"the history of channel c1 expired at {EXPIRED_AT}",
    "details": DETAILS,
}
METADATA: dict[str, Any] = {
    "channel_id": "c1",
    "manifest": {"type": "conversation"},
    "creator_id": "alice",
    "participants": [{"agent_id": "alice", "role": "initiator", "order": 0}],
    "state": "closed",
    "created_at": "2026-01-01T00:00:00.000Z",
    "closed_at": "2026-01-01T00:00:00.000Z",
}


def test_the_hubs_not_found_says_when_the_history_expired() -> None:
    err = error_from_wire(EXPIRED)
    assert isinstance(err, NotFoundError)
    assert history_expired(err) == WHEN
    details = history_expired_details(err)
    assert details is not None
    assert (details.reason, details.channel_id, details.expired_at) == ("expired", "c1", WHEN)


@pytest.mark.parametrize(
    "err",
    [
        NotFoundError("channel not found: c1"),
        error_from_wire({**EXPIRED, "details": {"reason": "expired", "channel_id": "c1"}}),
        error_from_wire({**EXPIRED, "details": {**DETAILS, "expired_at": "yesterday"}}),
        error_from_wire({**EXPIRED, "details": {**DETAILS, "expired_at": 1767229200}}),
        error_from_wire({**EXPIRED, "details": {**DETAILS, "expired_at": "2026-01-01T01:00:00"}}),
        ProtocolError("no", DETAILS),
        ValueError("not a wire error"),
    ],
)
def test_any_other_error_is_not_an_expired_history(err: BaseException) -> None:
    assert history_expired(err) is None
    assert history_expired_details(err) is None


def test_metadata_carries_expired_at_and_an_older_record_without_it_parses() -> None:
    kept = ChannelMetadata.model_validate(METADATA)
    assert kept.expired_at is None
    assert history_expired(kept) is None
    gone = ChannelMetadata.model_validate({**METADATA, "expired_at": EXPIRED_AT})
    assert gone.expired_at == EXPIRED_AT
    assert history_expired(gone) == WHEN
