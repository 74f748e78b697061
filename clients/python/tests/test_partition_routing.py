"""Where the client sends each request in a partitioned deployment: an operation about one channel to the channel's
partition, `listChannels`, `pendingTurnsFor` and `deliveryLag` to every partition (joined), every other operation to
the home subject; the partition count asked of `health` once. With one partition every subject is today's."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from ag2net import (
    AgentClient,
    DeliveryLag,
    Envelope,
    HubRpc,
    HubUnavailableError,
    InternalError,
    Passport,
    PendingTurn,
    partition_of,
)
from ag2net.identity import IdentityGrant

from .fakes import Answer, RoutedNats, ScriptedNats, channel_result, hub_on, passport

#: Channels with their partitions of 16 and of 4 (conformance/fixtures/partitions.json).
C1 = "01HZY3K4Q7M2N8P5R6S7T8V9W0"  # 1 of 16, 1 of 4
C5 = "01HF7YCG49SJC54H0DT38C6WJX"  # 5 of 16, 1 of 4
C14 = "01HF7YB9EYDRYQ0W4Y5DB78W8D"  # 14 of 16, 2 of 4


def allowed(request: dict[str, Any], partition: int | None) -> dict[str, Any]:
    return {"allowed": True}


async def test_a_channel_op_goes_to_its_channels_partition_after_one_health_request() -> None:
    nc = RoutedNats(16, {"canSend": allowed})
    rpc = HubRpc(nc, "acme")
    before = rpc.known_partitions
    for channel_id in (C1, C5, C14, C1):
        await rpc.call("canSend", {"channel_id": channel_id}, "alice-1")
    assert nc.subjects == [
        "acme.hub.v1.health",
        "acme.hub.v1.canSend.1.alice-1",
        "acme.hub.v1.canSend.5.alice-1",
        "acme.hub.v1.canSend.14.alice-1",
        "acme.hub.v1.canSend.1.alice-1",
    ]
    assert (before, rpc.known_partitions, await rpc.partitions(), rpc.names.partitions) == (None, 16, 16, 1)


@pytest.mark.parametrize("op", ["post", "getChannel", "readWal", "acquireTurnLock", "reportTurnFailure"])
async def test_every_channel_op_is_routed_by_its_channel_id(op: str) -> None:
    nc = RoutedNats(64, {op: allowed})
    await HubRpc(nc, "acme").call(op, {"channel_id": C14}, "bob")
    assert nc.subjects == ["acme.hub.v1.health", f"acme.hub.v1.{op}.{partition_of(C14, 64)}.bob"]


async def test_home_ops_keep_their_subjects_and_ask_nothing_first() -> None:
    nc = RoutedNats(16, {"getAgent": lambda r, k: {"passport": None}, "getTask": lambda r, k: {"task": None}})
    rpc = HubRpc(nc, "acme")
    await rpc.call("getAgent", {"name_or_id": "x"})
    await rpc.call("getTask", {"task_id": "t"}, "alice-1")
    await rpc.call("health", {})
    assert nc.subjects == ["acme.hub.v1.getAgent", "acme.hub.v1.getTask.alice-1", "acme.hub.v1.health"]
    assert rpc.known_partitions is None  # a caller's own health request tells the client nothing


async def test_with_one_partition_every_subject_is_todays() -> None:
    for partitions in (None, 1):
        nc = RoutedNats(partitions, {"post": allowed, "pendingTurnsFor": lambda r, k: {"turns": []}})
        rpc = HubRpc(nc, "acme")
        await rpc.call("post", {"channel_id": C5}, "alice-1")
        await rpc.call("pendingTurnsFor", {}, "alice-1")
        await rpc.call("pendingTurnsFor", {}, "alice-1", partition=0)
        assert nc.subjects == [
            "acme.hub.v1.health",
            "acme.hub.v1.post.alice-1",
            "acme.hub.v1.pendingTurnsFor.alice-1",
            "acme.hub.v1.pendingTurnsFor.alice-1",
        ]
        with pytest.raises(ValueError, match=r"^partition must be an integer from 0 to 0, not 1$"):
            await rpc.call("pendingTurnsFor", {}, "alice-1", partition=1)


async def test_a_count_given_up_front_is_not_asked() -> None:
    nc = RoutedNats(16, {"post": allowed})
    await HubRpc(nc, "acme", partitions=4).call("post", {"channel_id": C14}, "alice-1")
    assert nc.subjects == ["acme.hub.v1.post.2.alice-1"]


async def test_a_scattered_op_names_its_partition_when_there_are_several() -> None:
    nc = RoutedNats(16, {"listChannels": lambda r, k: {"channels": [], "next_cursor": None}})
    rpc = HubRpc(nc, "acme")
    await rpc.call("listChannels", {}, "alice-1", partition=5)
    assert nc.subjects == ["acme.hub.v1.health", "acme.hub.v1.listChannels.5.alice-1"]
    with pytest.raises(ValueError, match=r"^listChannels is answered by each of the deployment's 16 partitions "):
        await rpc.call("listChannels", {}, "alice-1")
    with pytest.raises(ValueError, match=r"^partition must be an integer from 0 to 15, not 16$"):
        await rpc.call("listChannels", {}, "alice-1", partition=16)
    # Every other operation ignores a partition: a channel's is its own, the home operations have none.
    nc.answers["canSend"] = allowed
    await rpc.call("canSend", {"channel_id": C5}, "alice-1", partition=7)
    assert nc.subjects[-1] == "acme.hub.v1.canSend.5.alice-1"


async def test_a_channel_op_without_a_channel_id_is_refused_when_there_are_several_partitions() -> None:
    rpc = HubRpc(RoutedNats(16), "acme")
    with pytest.raises(ValueError, match=r"^createChannel needs a channel_id in a deployment of 16 partitions: "):
        await rpc.call("createChannel", {"type": "conversation", "participants": []}, "alice-1")
    with pytest.raises(ValueError, match=r"^post needs a channel_id"):
        await rpc.call("post", {"channel_id": None}, "alice-1")


async def test_concurrent_calls_share_one_health_request() -> None:
    nc = RoutedNats(16, {"canSend": allowed})
    rpc = HubRpc(nc, "acme")
    await asyncio.gather(*(rpc.call("canSend", {"channel_id": c}, "a") for c in (C1, C5, C14)))
    assert nc.subjects.count("acme.hub.v1.health") == 1
    assert sorted(nc.subjects[1:]) == ["acme.hub.v1.canSend.1.a", "acme.hub.v1.canSend.14.a", "acme.hub.v1.canSend.5.a"]


async def test_a_cancelled_call_leaves_the_health_request_to_the_calls_waiting_for_it() -> None:
    nc = RoutedNats(16, {"canSend": allowed})
    nc.health_gate = asyncio.Event()
    rpc = HubRpc(nc, "acme")
    first = asyncio.ensure_future(rpc.call("canSend", {"channel_id": C1}, "a"))
    second = asyncio.ensure_future(rpc.call("canSend", {"channel_id": C5}, "a"))
    await asyncio.sleep(0.01)
    first.cancel()
    nc.health_gate.set()
    assert await second == {"allowed": True}
    assert first.cancelled()
    assert nc.subjects == ["acme.hub.v1.health", "acme.hub.v1.canSend.5.a"]


async def test_a_failed_health_request_is_forgotten_and_the_next_call_asks_again() -> None:
    nc = RoutedNats(16, {"canSend": allowed}, health_errors=1)
    rpc = HubRpc(nc, "acme")
    with pytest.raises(InternalError, match=r"^boom$"):
        await rpc.call("canSend", {"channel_id": C5}, "a")
    assert rpc.known_partitions is None
    await rpc.call("canSend", {"channel_id": C5}, "a")
    assert nc.subjects == ["acme.hub.v1.health", "acme.hub.v1.health", "acme.hub.v1.canSend.5.a"]


async def test_an_invalid_health_is_an_internal_error_and_forgotten() -> None:
    nc = RoutedNats(0)
    with pytest.raises(InternalError, match=r"^hub sent an invalid health result$"):
        await HubRpc(nc, "acme").call("canSend", {"channel_id": C5}, "a")


async def test_a_health_request_nobody_answers_is_named_when_the_call_gives_up() -> None:
    with pytest.raises(HubUnavailableError, match=r"^no hub answered canSend: its health request, for the ") as caught:
        await HubRpc(ScriptedNats([]), "acme", retry_for=0.2).call("canSend", {"channel_id": C5}, "a")
    assert isinstance(caught.value.__cause__, HubUnavailableError)


async def test_a_call_waiting_for_another_calls_failed_ask_asks_again_itself() -> None:
    nc = RoutedNats(4, {"canSend": allowed}, health_errors=1)
    rpc = HubRpc(nc, "acme")
    calls = [rpc.call("canSend", {"channel_id": c}, "a") for c in (C1, C14)]
    first, second = await asyncio.gather(*calls, return_exceptions=True)
    assert isinstance(first, InternalError)
    assert second == {"allowed": True}
    assert nc.subjects == ["acme.hub.v1.health", "acme.hub.v1.health", "acme.hub.v1.canSend.2.a"]


def pages_of(channels: dict[int, list[str]]) -> Answer:
    """`listChannels` of a deployment whose partition `k` holds `channels[k]`, in pages of at most two."""

    def answer(request: dict[str, Any], partition: int | None) -> dict[str, Any]:
        held = channels.get(partition or 0, [])
        start = int(request["cursor"] or 0)
        end = start + min(2, request["limit"])
        return {
            "channels": [channel_result(c) for c in held[start:end]],
            "next_cursor": str(end) if end < len(held) else None,
        }

    return answer


async def test_list_channels_walks_the_partitions_in_order_page_by_page_up_to_the_limit() -> None:
    held = {0: ["a0", "b0", "c0"], 1: [], 2: ["a2"], 3: ["a3", "b3", "c3"]}
    nc = RoutedNats(4, {"listChannels": pages_of(held)})
    hub = await hub_on(nc, partitions=None)
    found = await hub.list_channels({"state": "active", "limit": 6}, "alice-1")
    assert [c.channel_id for c in found] == ["a0", "b0", "c0", "a2", "a3", "b3"]
    assert [(s, r["limit"], r["cursor"]) for s, r in nc.requests[1:]] == [
        ("t.hub.v1.listChannels.0.alice-1", 6, None),
        ("t.hub.v1.listChannels.0.alice-1", 4, "2"),
        ("t.hub.v1.listChannels.1.alice-1", 3, None),
        ("t.hub.v1.listChannels.2.alice-1", 3, None),
        ("t.hub.v1.listChannels.3.alice-1", 2, None),
    ]
    assert all(r["state"] == "active" for _, r in nc.requests[1:])
    everything = await hub.list_channels({"limit": 50}, "alice-1")
    assert [c.channel_id for c in everything] == ["a0", "b0", "c0", "a2", "a3", "b3", "c3"]
    with pytest.raises(ValueError, match=r"^a cursor names a page of one partition"):
        await hub.list_channels({"cursor": "2"}, "alice-1")


async def test_list_channels_of_one_partition_follows_its_cursors_on_todays_subject() -> None:
    nc = RoutedNats(None, {"listChannels": pages_of({0: ["a", "b", "c"]})})
    hub = await hub_on(nc, partitions=None)
    assert [c.channel_id for c in await hub.list_channels(None, "alice-1")] == ["a", "b", "c"]
    assert nc.subjects == ["t.hub.v1.health"] + ["t.hub.v1.listChannels.alice-1"] * 2


def turn(channel_id: str, trigger: str, at: str) -> dict[str, Any]:
    return {"channel_id": channel_id, "triggering_envelope_id": trigger, "expected_at": at}


TURNS = {
    0: [turn("z0", "e1", "2025-01-01T00:00:03.000Z")],
    1: [turn(C1, "e2", "2025-01-01T00:00:01.000Z"), turn("b1", "e3", "2025-01-01T00:00:03.000Z")],
    2: [],
    3: [turn("a3", "e4", "2025-01-01T00:00:03.000Z")],
}


async def test_pending_turns_asks_every_partition_and_joins_them_by_expected_at_then_channel() -> None:
    nc = RoutedNats(4, {"pendingTurnsFor": lambda r, k: {"turns": TURNS[k or 0]}})
    bob = AgentClient(await hub_on(nc, partitions=None), passport("bob"))
    turns = await bob.pending_turns()
    assert turns == [PendingTurn.model_validate(t) for t in (TURNS[1][0], TURNS[3][0], TURNS[1][1], TURNS[0][0])]
    assert nc.subjects[0] == "t.hub.v1.health"
    assert sorted(nc.subjects[1:]) == [f"t.hub.v1.pendingTurnsFor.{k}.bob" for k in range(4)]


async def test_is_my_turn_asks_only_the_channels_partition() -> None:
    nc = RoutedNats(4, {"canSend": allowed, "pendingTurnsFor": lambda r, k: {"turns": TURNS[k or 0]}})
    bob = AgentClient(await hub_on(nc, partitions=4), passport("bob"))
    trigger = Envelope.model_validate(
        {"channel_id": C1, "sender_id": "alice", "event_type": "ag2.msg.text", "envelope_id": "e2"}
    )
    other = trigger.model_copy(update={"envelope_id": "e9"})
    assert [await bob.is_my_turn(trigger), await bob.is_my_turn(other)] == [True, False]
    assert nc.subjects == ["t.hub.v1.canSend.1.bob", "t.hub.v1.pendingTurnsFor.1.bob"] * 2


def lag(pending: int, ack_pending: int, oldest: float | None) -> dict[str, Any]:
    return {"delivery": {"pending": pending, "ack_pending": ack_pending, "oldest_pending_age_seconds": oldest}}


@pytest.mark.parametrize(
    ("answers", "joined"),
    [
        (
            [lag(1, 2, 3.5), {"delivery": None}, lag(4, 0, None), lag(0, 1, 9.25)],
            DeliveryLag(pending=5, ack_pending=3, oldest_pending_age_seconds=9.25),
        ),
        (
            [lag(1, 0, None), lag(0, 0, None), {"delivery": None}, lag(2, 2, None)],
            DeliveryLag(pending=3, ack_pending=2, oldest_pending_age_seconds=None),
        ),
        ([{"delivery": None}] * 4, None),
    ],
)
async def test_delivery_lag_sums_the_partitions_and_takes_the_oldest_age(
    answers: list[dict[str, Any]], joined: DeliveryLag | None
) -> None:
    nc = RoutedNats(4, {"deliveryLag": lambda r, k: answers[k or 0]})
    hub = await hub_on(nc, partitions=None)
    assert await hub.delivery_lag() == joined
    assert sorted(nc.subjects[1:]) == [f"t.hub.v1.deliveryLag.{k}.$operator" for k in range(4)]


async def test_delivery_lag_of_one_partition_is_the_hubs_answer() -> None:
    nc = RoutedNats(None, {"deliveryLag": lambda r, k: lag(1, 2, 0.5)})
    hub = await hub_on(nc, partitions=None)
    assert await hub.delivery_lag() == DeliveryLag(pending=1, ack_pending=2, oldest_pending_age_seconds=0.5)
    assert nc.subjects == ["t.hub.v1.health", "t.hub.v1.deliveryLag.$operator"]


async def test_open_sends_a_client_minted_channel_id_to_its_partition() -> None:
    created: list[str] = []

    def create(request: dict[str, Any], partition: int | None) -> dict[str, Any]:
        created.append(request["channel_id"])
        return {"channel": channel_result(request["channel_id"])}

    nc = RoutedNats(
        16, {"createChannel": create, "getAgent": lambda r, k: {"passport": {"name": "x", "agent_id": "x"}}}
    )
    alice = AgentClient(await hub_on(nc, partitions=None), Passport.model_validate({"name": "a", "agent_id": "alice"}))
    opened = await alice.open("conversation", "x")
    assert created == [opened.metadata.channel_id]
    assert nc.subjects[-1] == f"t.hub.v1.createChannel.{partition_of(created[0], 16)}.alice"


async def test_an_identitys_client_keeps_the_count_its_parent_learnt() -> None:
    nc = RoutedNats(4, {"canSend": allowed})
    hub = await hub_on(nc, partitions=None)
    await hub.call("canSend", {"channel_id": C14}, "bob")
    _, bound = await hub._bind(IdentityGrant(passport("bob"), None))
    await bound.call("canSend", {"channel_id": C5})
    assert nc.subjects == ["t.hub.v1.health", "t.hub.v1.canSend.2.bob", "t.hub.v1.canSend.1.bob"]
