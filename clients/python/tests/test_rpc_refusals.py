"""A request NATS refuses (a permissions violation) is raised as `AccessDeniedError` naming the operation and the
subject, as soon as the connection reports it, and not resent; the TypeScript client does the same."""

from __future__ import annotations

import asyncio
import time

import nats.errors
import pytest

from ag2net import AccessDeniedError, HubRpc, HubUnavailableError
from ag2net.rpc import Reply


class RefusingNats:
    """A connection on which every request goes unanswered until its timeout; `refuse` sets the error nats-py keeps
    when the server refuses a publish (lower-cased, as its parser hands it over) while the request waits."""

    def __init__(self, refuse: str | None) -> None:
        self.refuse = refuse
        self.last_error: Exception | None = None
        self.subjects: list[str] = []

    async def request(self, subject: str, payload: bytes = b"", timeout: float = 0.5) -> Reply:
        self.subjects.append(subject)
        if self.refuse is not None:
            await asyncio.sleep(0.01)
            self.last_error = nats.errors.Error(f'nats: permissions violation for publish to "{self.refuse.lower()}"')
        await asyncio.sleep(timeout)
        raise nats.errors.TimeoutError


async def test_a_refused_request_is_access_denied_at_once_and_not_resent() -> None:
    nc = RefusingNats(refuse="ag2.hub.v1.findAgentId")
    started = time.monotonic()
    with pytest.raises(AccessDeniedError) as caught:
        await HubRpc(nc, retry_for=5).call("findAgentId", {"name": "scholar"}, timeout=2)
    assert (caught.value.code, caught.value.message) == (
        "access_denied",
        "this connection may not call findAgentId (NATS refused ag2.hub.v1.findAgentId)",
    )
    assert isinstance(caught.value.__cause__, nats.errors.Error)
    assert nc.subjects == ["ag2.hub.v1.findAgentId"]
    assert time.monotonic() - started < 1


async def test_a_refusal_of_an_identity_subject_names_it_whatever_its_case() -> None:
    subject = "p1.hub.v1.pendingTurnsFor.01JD0000000000000000000BOB"
    nc = RefusingNats(refuse=subject)
    with pytest.raises(AccessDeniedError) as caught:
        await HubRpc(nc, "p1", partitions=1).call("pendingTurnsFor", {}, "01JD0000000000000000000BOB", timeout=2)
    assert caught.value.message == f"this connection may not call pendingTurnsFor (NATS refused {subject})"


async def test_a_refusal_of_another_subject_or_an_earlier_one_is_not_this_requests() -> None:
    nc = RefusingNats(refuse="ag2.hub.v1.getAgent")
    with pytest.raises(HubUnavailableError):
        await HubRpc(nc, retry_for=0.3).call("health", {}, timeout=0.1)
    # The connection still holds the refusal of getAgent; a later request of it times out like any other.
    nc.refuse = None
    with pytest.raises(HubUnavailableError):
        await HubRpc(nc, retry_for=0.3).call("getAgent", {"name_or_id": "x"}, timeout=0.1)
    assert nc.subjects[-1] == "ag2.hub.v1.getAgent"
