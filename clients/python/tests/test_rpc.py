"""Retry rules of HubRpc, as the TypeScript client's: no responders and `unavailable` always, timeouts only for
idempotent operations; other hub errors are raised typed at once."""

from __future__ import annotations

import nats.errors
import pytest

from ag2net import OPERATOR_CALLER, HubRpc, HubUnavailableError, NotFoundError, UnknownNetworkError

from .fakes import ScriptedNats, hub_on

OK = {"ok": True, "result": {"allowed": True}}
UNAVAILABLE = {"ok": False, "error": {"code": "unavailable", "message": "not the active hub"}}


async def test_no_responders_and_unavailable_are_retried_with_the_same_subject() -> None:
    nc = ScriptedNats([nats.errors.NoRespondersError(), UNAVAILABLE, OK])
    result = await HubRpc(nc, "p1", partitions=1).call("canSend", {"channel_id": "c"}, "alice")
    assert result == {"allowed": True}
    assert nc.subjects == ["p1.hub.v1.canSend.alice"] * 3


async def test_a_timeout_is_retried_for_an_idempotent_op() -> None:
    nc = ScriptedNats([nats.errors.TimeoutError(), OK])
    assert await HubRpc(nc, partitions=1).call("post", {"channel_id": "c"}, "alice") == {"allowed": True}
    assert nc.subjects == ["ag2.hub.v1.post.alice"] * 2


async def test_a_timeout_is_not_retried_for_a_non_idempotent_op() -> None:
    nc = ScriptedNats([nats.errors.TimeoutError(), OK])
    with pytest.raises(nats.errors.TimeoutError):
        await HubRpc(nc).call("unregister", {}, "alice")
    assert nc.subjects == ["ag2.hub.v1.unregister.alice"]


async def test_other_hub_errors_are_raised_typed_at_once() -> None:
    nc = ScriptedNats([{"ok": False, "error": {"code": "not_found", "message": "no such agent"}}])
    with pytest.raises(NotFoundError) as caught:
        await HubRpc(nc).call("getAgent", {"name_or_id": "x"})
    assert (caught.value.code, caught.value.message, nc.subjects) == (
        "not_found",
        "no such agent",
        ["ag2.hub.v1.getAgent"],
    )
    nc = ScriptedNats([{"ok": False, "error": {"code": "brand_new", "message": "m"}}])
    with pytest.raises(UnknownNetworkError) as unknown:
        await HubRpc(nc).call("health", {})
    assert unknown.value.code == "brand_new"


async def test_gives_up_after_retry_for() -> None:
    nc = ScriptedNats([])
    with pytest.raises(HubUnavailableError):
        await HubRpc(nc, retry_for=0.2).call("health", {})
    assert len(nc.subjects) >= 2


async def test_an_operator_client_reads_channels_as_the_operator_unless_told_another_caller() -> None:
    channel = {"ok": True, "result": {"state": None}}
    nc = ScriptedNats([channel, channel, {"ok": True, "result": {"agent_id": None}}])
    hub = await hub_on(nc, operator=True)
    assert (hub.default_caller, await hub.adapter_state("c1"), await hub.adapter_state("c1", "a1")) == (
        OPERATOR_CALLER,
        None,
        None,
    )
    assert await hub.find_agent_id("x") is None
    assert nc.subjects == ["t.hub.v1.adapterState.$operator", "t.hub.v1.adapterState.a1", "t.hub.v1.findAgentId"]
    plain = await hub_on(nc, partitions=None)
    with pytest.raises(ValueError, match=r"^adapterState needs the caller's agent id$"):
        await plain.adapter_state("c1")
