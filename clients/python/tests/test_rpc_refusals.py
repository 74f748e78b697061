"""A request NATS refuses (a permissions violation) is raised as `AccessDeniedError` naming the operation and the
subject, as soon as the connection reports it, and not resent; the TypeScript client does the same."""

from __future__ import annotations

import time

import nats.errors
import pytest

from ag2net import AccessDeniedError, HubRpc, HubUnavailableError

from .fakes import RefusingNats


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
