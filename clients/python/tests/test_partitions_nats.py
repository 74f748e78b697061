"""The client against a real nats-server whose plain subscribers play the owners of a deployment of 4 partitions:
each owner answers only its own partition's subjects (`<prefix>.hub.v1.<op>.<k>.*`), partition 0's owner the home
subjects too. Every request reaches its partition's owner, and the scattered reads join every owner's answers. Every
owner and one standby answer the hub roster, each with what it holds.

Runs on `$NATS_SERVER_BIN` or the `nats-server` on the PATH; skipped when there is none."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import nats
import pytest
from nats.aio.msg import Msg

from ag2net import (
    OPERATOR_CALLER,
    AgentClient,
    DeliveryLag,
    Health,
    HubClient,
    HubUnavailableError,
    PartitionHolder,
    PartitionHolders,
    PendingTurn,
    partition_holders,
)

from .fakes import channel_result, health_result, passport

PARTITIONS = 4
#: A channel of each partition of 4 (conformance/fixtures/partitions.json: its partition of 64, mod 4).
CHANNELS = {"a": 0, "01HZY3K4Q7M2N8P5R6S7T8V9W0": 1, "01HF7YB9EYDRYQ0W4Y5DB78W8D": 2, "01HF7YAT00SP5TCVVJ7RV6N93N": 3}
CREATED_AT = "2025-01-01T00:00:00.000Z"
#: The roster subject every hub of the prefix answers, owners and the standby alike.
ROSTER = "t.hubs.v1.ping"
STANDBY = health_result("hub-s", role="standby", epoch=0, partitions=PARTITIONS)


def _server_bin() -> str | None:
    return os.environ.get("NATS_SERVER_BIN") or shutil.which("nats-server")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def nats_url() -> Iterator[str]:
    binary = _server_bin()
    if binary is None:
        pytest.skip("no nats-server (set NATS_SERVER_BIN or put nats-server on the PATH)")
    port = _free_port()
    server = subprocess.Popen(
        [binary, "-a", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("nats-server did not start") from None
                time.sleep(0.05)
        yield f"nats://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=10)


class Owner:
    """The hub instance owning partition `k`: answers its channels' operations and its share of the scattered ones;
    records `(op, caller, channel_id)` of each request it got."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.channels = [c for c, p in CHANNELS.items() if p == k]
        self.got: list[tuple[str, str, str | None]] = []
        #: The partitions it reports holding, as `(partition, epoch)`: its own, at epoch 10 + k; none: a standby.
        self.held = [(k, 10 + k)]

    def health(self) -> dict[str, Any]:
        role = "active" if self.held else "standby"
        return health_result(f"hub-{self.k}", role=role, partitions=PARTITIONS, held=self.held)

    def answer(self, op: str, request: dict[str, Any]) -> dict[str, Any]:
        if op == "health":
            return self.health()
        if op == "post":
            return {"envelope_id": request["envelope_id"], "sequence": 1, "created_at": CREATED_AT}
        if op == "getChannel":
            return {"channel": channel_result(request["channel_id"], "bob")}
        if op == "listChannels":  # pages of one channel: the cursor is the index of the next
            start = int(request["cursor"] or 0)
            page = self.channels[start : start + 1]
            more = start + 1 < len(self.channels)
            return {
                "channels": [channel_result(c, "bob") for c in page],
                "next_cursor": str(start + 1) if more else None,
            }
        if op == "pendingTurnsFor":
            at = f"2025-01-01T00:00:0{PARTITIONS - self.k}.000Z"
            return {
                "turns": [{"channel_id": c, "triggering_envelope_id": "e", "expected_at": at} for c in self.channels]
            }
        if op == "deliveryLag":
            oldest = None if self.k == 0 else float(self.k)
            return {"delivery": {"pending": 1, "ack_pending": self.k, "oldest_pending_age_seconds": oldest}}
        raise AssertionError(f"owner {self.k} got {op}")

    async def serve(self, msg: Msg) -> None:
        tokens = msg.subject.split(".")
        op, caller = tokens[3], tokens[-1] if len(tokens) > 4 else ""
        if len(tokens) == 6:
            assert int(tokens[4]) == self.k
        request = json.loads(msg.data)
        self.got.append((op, caller, request.get("channel_id")))
        await msg.respond(json.dumps({"ok": True, "result": self.answer(op, request)}).encode())

    async def serve_roster(self, msg: Msg) -> None:
        await msg.respond(json.dumps({"ok": True, "result": self.health()}).encode())


async def serve_standby(msg: Msg) -> None:
    """A hub of the prefix that holds no partition: it answers only the roster."""
    await msg.respond(json.dumps({"ok": True, "result": STANDBY}).encode())


@pytest.fixture
async def owners(nats_url: str) -> AsyncIterator[list[Owner]]:
    connections = []
    owners = [Owner(k) for k in range(PARTITIONS)]
    try:
        for owner in owners:
            nc = await nats.connect(nats_url)
            connections.append(nc)
            await nc.subscribe(f"t.hub.v1.*.{owner.k}.*", cb=owner.serve)
            await nc.subscribe(ROSTER, cb=owner.serve_roster)
            if owner.k == 0:
                await nc.subscribe("t.hub.v1.health", cb=owner.serve)
            await nc.flush()
        standby = await nats.connect(nats_url)
        connections.append(standby)
        await standby.subscribe(ROSTER, cb=serve_standby)
        await standby.flush()
        yield owners
    finally:
        for nc in connections:
            await nc.close()


async def test_each_request_reaches_its_partitions_owner_and_the_scatter_joins(
    nats_url: str, owners: list[Owner]
) -> None:
    async with await HubClient.connect(nats_url, prefix="t") as hub:
        bob = AgentClient(hub, passport("bob"))
        for channel_id in CHANNELS:
            await bob.send(channel_id, "hi")
            assert (await bob.get_channel(channel_id)).channel_id == channel_id
        assert await hub.partitions() == PARTITIONS
        for owner in owners:
            routed = [got for got in owner.got if got[0] != "health"]
            assert routed == [(op, "bob", c) for c in owner.channels for op in ("post", "getChannel")]
        assert [got for owner in owners for got in owner.got if got[0] == "health"] == [("health", "", None)]

        listed = await bob.list_channels({"limit": 10})
        assert [c.channel_id for c in listed] == list(CHANNELS)
        turns = await bob.pending_turns()
        # Partition 3's turns are expected first, partition 0's last.
        assert turns == [
            PendingTurn(channel_id=c, triggering_envelope_id="e", expected_at=f"2025-01-01T00:00:0{4 - k}.000Z")
            for c, k in sorted(CHANNELS.items(), key=lambda item: -item[1])
        ]
        lag = await hub.delivery_lag()
        assert lag == DeliveryLag(pending=4, ack_pending=6, oldest_pending_age_seconds=3.0)
        for owner in owners:
            scattered = [(op, caller) for op, caller, _ in owner.got if op in ("pendingTurnsFor", "deliveryLag")]
            assert scattered == [("pendingTurnsFor", "bob"), ("deliveryLag", OPERATOR_CALLER)]
            pages = [op for op, _, _ in owner.got if op == "listChannels"]
            assert len(pages) == max(1, len(owner.channels))


async def test_a_partition_nobody_owns_leaves_the_scatter_unanswered(nats_url: str, owners: list[Owner]) -> None:
    async with await HubClient.connect(nats_url, prefix="t", retry_for=0.3, partitions=PARTITIONS + 1) as hub:
        bob = AgentClient(hub, passport("bob"))
        with pytest.raises(HubUnavailableError, match=r"^no hub answered pendingTurnsFor within 0.3 s$"):
            await asyncio.wait_for(bob.pending_turns(), 5)


async def test_the_roster_names_every_hub_and_the_holders_of_each_partition(nats_url: str, owners: list[Owner]) -> None:
    owners[2].held = []  # hub-2 lost its lease: partition 2 has nobody
    owners[1].held = [(1, 11), (3, 14)]  # partition 3 moves from hub-3 to hub-1
    async with await HubClient.connect(nats_url, prefix="t") as hub:
        hubs = await hub.hubs(timeout=0.5)
    assert hubs == [Health.model_validate(owners[k].health()) for k in (0, 1, 3, 2)] + [Health.model_validate(STANDBY)]
    assert [(h.hub_id, h.role) for h in hubs] == [
        ("hub-0", "active"),
        ("hub-1", "active"),
        ("hub-3", "active"),
        ("hub-2", "standby"),
        ("hub-s", "standby"),
    ]
    assert partition_holders(hubs, hubs[0].partitions) == [
        PartitionHolders(partition=0, held_by=[PartitionHolder(hub_id="hub-0", epoch=10)]),
        PartitionHolders(partition=1, held_by=[PartitionHolder(hub_id="hub-1", epoch=11)]),
        PartitionHolders(partition=2, held_by=[]),
        PartitionHolders(
            partition=3,
            held_by=[PartitionHolder(hub_id="hub-1", epoch=14), PartitionHolder(hub_id="hub-3", epoch=13)],
        ),
    ]


async def test_the_roster_of_a_prefix_no_hub_serves_is_empty_at_once(nats_url: str, owners: list[Owner]) -> None:
    async with await HubClient.connect(nats_url, prefix="u") as hub:
        started = time.monotonic()
        assert await hub.hubs(timeout=5) == []
        assert time.monotonic() - started < 1
