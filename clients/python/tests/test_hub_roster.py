"""The hub roster (`HubClient.hubs`) and who holds each partition (`partition_holders`, `held_by`), as
`hub-roster.ts` of @ag2net/client: one request every hub answers, collected for a window; none there, at once."""

from __future__ import annotations

import logging
import time
from typing import Any

import nats.errors
import pytest

from ag2net import (
    AccessDeniedError,
    Health,
    HeldPartition,
    PartitionHolder,
    PartitionHolders,
    held_by,
    partition_holders,
)

from .fakes import FakeNats, RefusingNats, health_result, hub_on, ok


def hub(
    hub_id: str, held: list[tuple[int, int]] | None = None, role: str = "active", partitions: int = 4, epoch: int = 0
) -> Health:
    """A hub of a deployment of `partitions` partitions, holding `held` as `(partition, epoch)`."""
    return Health.model_validate(health_result(hub_id, role=role, epoch=epoch, partitions=partitions, held=held or []))


def holders(partition: int, *hubs: tuple[str, int]) -> PartitionHolders:
    return PartitionHolders(partition=partition, held_by=[PartitionHolder(hub_id=h, epoch=e) for h, e in hubs])


def test_every_partition_is_listed_with_the_hubs_holding_it_and_none_for_a_partition_no_hub_holds() -> None:
    hubs = [hub("hub-a", [(0, 1), (3, 2)]), hub("hub-b", [(1, 5)]), hub("hub-c", role="standby")]
    assert partition_holders(hubs, 4) == [
        holders(0, ("hub-a", 1)),
        holders(1, ("hub-b", 5)),
        holders(2),
        holders(3, ("hub-a", 2)),
    ]


def test_both_hubs_of_a_partition_that_moves_between_them_are_named_in_the_rosters_order() -> None:
    hubs = [hub("hub-a", [(0, 1)], partitions=1), hub("hub-b", [(0, 2)], partitions=1)]
    assert partition_holders(hubs, 1) == [holders(0, ("hub-a", 1), ("hub-b", 2))]


def test_every_partition_is_without_a_holder_when_no_hub_answered() -> None:
    assert partition_holders([], 2) == [holders(0), holders(1)]
    assert [p.model_dump() for p in partition_holders([], 1)] == [{"partition": 0, "held_by": []}]


def test_an_active_hub_from_before_partitions_holds_the_only_partition() -> None:
    older = health_result("old", epoch=7)
    assert held_by(Health.model_validate(older)) == [HeldPartition(partition=0, epoch=7)]
    assert held_by(Health.model_validate({**older, "role": "standby"})) == []
    assert partition_holders([Health.model_validate(older)], 1) == [holders(0, ("old", 7))]


def test_what_a_hub_reports_holding_is_what_it_holds() -> None:
    assert held_by(hub("new", [(0, 7)], partitions=1, epoch=7)) == [HeldPartition(partition=0, epoch=7)]
    assert held_by(hub("new", [(0, 3)], partitions=1, epoch=7)) == [HeldPartition(partition=0, epoch=3)]
    assert held_by(hub("new", partitions=4)) == []


async def test_the_roster_asks_once_and_lists_the_active_hubs_then_the_standbys_each_by_id(
    caplog: pytest.LogCaptureFixture,
) -> None:
    answers: list[dict[str, Any] | bytes] = [
        ok(health_result("hub-s2", role="standby", partitions=4)),
        ok(health_result("hub-b", partitions=4, held=[(1, 5)])),
        b"not json",
        {"ok": False, "error": {"code": "internal", "message": "boom"}},
        ok({"hub_id": "hub-z"}),
        ok(health_result("hub-s1", role="standby", partitions=4)),
        ok(health_result("hub-a", partitions=4, held=[(0, 1), (3, 2)])),
    ]
    nc = FakeNats(answers)
    with caplog.at_level(logging.WARNING, logger="ag2net"):
        hubs = await (await hub_on(nc)).hubs(timeout=0.2)
    assert [(h.hub_id, h.role, [(p.partition, p.epoch) for p in h.held]) for h in hubs] == [
        ("hub-a", "active", [(0, 1), (3, 2)]),
        ("hub-b", "active", [(1, 5)]),
        ("hub-s1", "standby", []),
        ("hub-s2", "standby", []),
    ]
    assert nc.requests == [("t.hubs.v1.ping", {})]
    assert [sub.unsubscribed for sub in nc.subscriptions.values()] == [True]
    assert [r.getMessage() for r in caplog.records] == [
        "roster reply dropped (t.hubs.v1.ping): not JSON",
        "roster reply dropped (t.hubs.v1.ping): error internal: boom",
        "roster reply dropped (t.hubs.v1.ping): not a Health",
    ]
    assert partition_holders(hubs, hubs[0].partitions) == [
        holders(0, ("hub-a", 1)),
        holders(1, ("hub-b", 5)),
        holders(2),
        holders(3, ("hub-a", 2)),
    ]


async def test_the_roster_collects_for_its_window() -> None:
    nc = FakeNats([ok(health_result("hub-a", partitions=1, held=[(0, 1)]))])
    started = time.monotonic()
    assert [h.hub_id for h in await (await hub_on(nc)).hubs(timeout=0.3)] == ["hub-a"]
    assert time.monotonic() - started >= 0.3


async def test_the_roster_of_a_prefix_no_hub_serves_is_empty_at_once() -> None:
    nc = FakeNats()
    started = time.monotonic()
    assert await (await hub_on(nc)).hubs(timeout=5) == []
    assert time.monotonic() - started < 1
    assert nc.requests == [("t.hubs.v1.ping", {})]


async def test_a_roster_request_nats_refuses_is_access_denied_at_once() -> None:
    nc = RefusingNats(refuse="t.hubs.v1.ping")
    started = time.monotonic()
    with pytest.raises(AccessDeniedError) as caught:
        await (await hub_on(nc)).hubs(timeout=5)
    assert (caught.value.code, caught.value.message) == (
        "access_denied",
        "only the operator may ask for the hub roster",
    )
    assert isinstance(caught.value.__cause__, nats.errors.Error)
    assert time.monotonic() - started < 1
    assert [sub.unsubscribed for sub in nc.subscriptions.values()] == [True]


async def test_a_refusal_of_another_subject_is_not_the_rosters() -> None:
    nc = RefusingNats(refuse="t.hub.v1.getAgent")
    assert await (await hub_on(nc)).hubs(timeout=0.2) == []


async def test_a_closed_client_does_not_ask() -> None:
    nc = FakeNats()
    client = await hub_on(nc)
    await client.close()
    with pytest.raises(RuntimeError, match=r"^HubClient is closed$"):
        await client.hubs()
    assert nc.requests == []
