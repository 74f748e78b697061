"""Delivery semantics without a server: per-channel order, duplicates, ack after handling, and the bounded retry of
a failing turn (1 s doubling, five attempts, then reported and acked), as the TypeScript client does them."""

from __future__ import annotations

import asyncio
import json
from typing import Any, cast

import pytest
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg

from ag2net import AgentClient, Envelope, EnvelopeTimeoutError, HubClient, HumanClient
from ag2net.inbox import ACK, Inbox, Settle
from ag2net.rpc import hub_names

from .fakes import FakeHub, fake_agent, passport

#: What the hub sets on every delivery it publishes.
HUB_HEADERS = {"Ag2-Origin": "hub"}


class FakeMsg:
    """The part of a JetStream message the inbox uses; records how it was settled."""

    def __init__(
        self,
        envelope: dict[str, Any],
        settled: list[tuple[str, str]],
        headers: dict[str, str] | None = HUB_HEADERS,
    ) -> None:
        self.data = json.dumps(envelope).encode()
        self.headers = headers
        self.subject = "t.agent.bob.inbox"
        self._id = str(envelope["envelope_id"])
        self._settled = settled

    async def ack(self) -> None:
        self._settled.append(("ack", self._id))

    async def nak(self, delay: float | None = None) -> None:
        self._settled.append(("nak", self._id))

    async def term(self) -> None:
        self._settled.append(("term", self._id))

    async def in_progress(self) -> None:
        return None


def envelope(channel: str, envelope_id: str) -> dict[str, Any]:
    return {
        "channel_id": channel,
        "sender_id": "alice",
        "event_type": "ag2.msg.text",
        "event_data": {"text": envelope_id},
        "envelope_id": envelope_id,
        "sequence": 1,
    }


async def test_one_channel_in_order_channels_in_parallel_ack_after_handling() -> None:
    log: list[str] = []
    settled: list[tuple[str, str]] = []
    release_a1 = asyncio.Event()

    async def handle(e: Envelope) -> Settle:
        log.append(f"start {e.envelope_id}")
        if e.envelope_id == "a1":
            await release_a1.wait()
        log.append(f"end {e.envelope_id}")
        return ACK

    inbox = Inbox(cast(NatsClient, None), hub_names("t"), "bob", handle, lambda e: None)
    for m in (FakeMsg(envelope("A", "a1"), settled), FakeMsg(envelope("A", "a2"), settled)):
        inbox._accept(cast(Msg, m))
    inbox._accept(cast(Msg, FakeMsg(envelope("B", "b1"), settled)))
    while ("ack", "b1") not in settled:
        await asyncio.sleep(0)
    # a1 is still running: a2 waits for it, b1 of another channel already ran and was acked.
    assert log == ["start a1", "start b1", "end b1"]
    assert settled == [("ack", "b1")]
    release_a1.set()
    while ("ack", "a2") not in settled:
        await asyncio.sleep(0)
    assert log == ["start a1", "start b1", "end b1", "end a1", "start a2", "end a2"]
    assert settled == [("ack", "b1"), ("ack", "a1"), ("ack", "a2")]


async def test_a_duplicate_of_an_acked_delivery_is_acked_without_handling() -> None:
    handled: list[str] = []
    settled: list[tuple[str, str]] = []

    async def handle(e: Envelope) -> Settle:
        handled.append(e.envelope_id)
        return ACK

    inbox = Inbox(cast(NatsClient, None), hub_names("t"), "bob", handle, lambda e: None)
    for _ in range(2):
        inbox._accept(cast(Msg, FakeMsg(envelope("A", "e1"), settled)))
    while len(settled) < 2:
        await asyncio.sleep(0)
    assert (handled, settled) == (["e1"], [("ack", "e1"), ("ack", "e1")])


async def test_a_malformed_delivery_is_terminated() -> None:
    settled: list[tuple[str, str]] = []

    async def handle(e: Envelope) -> Settle:
        raise AssertionError("not called")

    inbox = Inbox(cast(NatsClient, None), hub_names("t"), "bob", handle, lambda e: None)
    inbox._accept(cast(Msg, FakeMsg({"envelope_id": "bad", "surprise": True}, settled)))
    while not settled:
        await asyncio.sleep(0)
    assert settled == [("term", "bad")]


@pytest.mark.parametrize(
    "headers",
    [None, {}, {"Ag2-Origin": "agent"}, {"Ag2-Origin": "HUB"}, {"Ag2-Msg-Id": "x"}],
    ids=["no headers", "empty headers", "another origin", "origin in other case", "no origin header"],
)
async def test_a_delivery_the_hub_did_not_send_is_terminated_unread(headers: dict[str, str] | None) -> None:
    settled: list[tuple[str, str]] = []
    published: list[Envelope] = []

    handled: list[str] = []

    async def handle(e: Envelope) -> Settle:
        handled.append(e.envelope_id)
        return ACK

    inbox = Inbox(cast(NatsClient, None), hub_names("t"), "bob", handle, published.append)
    # A well-formed invite, as a forger would publish on bob's inbox subject, without the hub's origin header.
    forged = {**envelope("A", "forged"), "event_type": "ag2.channel.invite", "event_data": {"channel_id": "A"}}
    inbox._accept(cast(Msg, FakeMsg(forged, settled, headers)))
    inbox._accept(cast(Msg, FakeMsg(envelope("A", "real"), settled)))
    while ("ack", "real") not in settled:
        await asyncio.sleep(0)
    assert settled == [("term", "forged"), ("ack", "real")]
    assert (handled, [e.envelope_id for e in published]) == (["real"], ["real"])


async def test_a_failing_turn_backs_off_then_is_reported_once_and_acked() -> None:
    reports: list[tuple[str, str, int]] = []

    async def failing(e: Envelope, me: AgentClient) -> None:
        raise RuntimeError("model down")

    async def on_failed(e: Envelope, error: BaseException, attempts: int) -> None:
        reports.append((e.envelope_id, str(error), attempts))

    agent = fake_agent(failing, on_failed)
    trigger = Envelope.model_validate(envelope("A", "q1"))
    outcomes = [await agent._handle(trigger) for _ in range(5)]
    assert outcomes == [
        Settle(ack=False, delay=1.0),
        Settle(ack=False, delay=2.0),
        Settle(ack=False, delay=4.0),
        Settle(ack=False, delay=8.0),
        ACK,
    ]
    assert reports == [("q1", "model down", 5)]
    # The count starts again for the next failure of the same delivery.
    assert await agent._handle(trigger) == Settle(ack=False, delay=1.0)


async def test_a_persons_wait_sees_a_recent_delivery_once_and_an_agents_does_not() -> None:
    stamped = passport("p")
    answer = Envelope.model_validate(envelope("A", "answer"))
    person = HumanClient(cast(HubClient, FakeHub()), stamped)
    person._publish(answer)  # delivered before the wait started
    assert await person.next_envelope(lambda e: e.channel_id == "A", timeout=5) == answer
    with pytest.raises(EnvelopeTimeoutError):
        await person.next_envelope(lambda e: e.channel_id == "A", timeout=0.05)

    agent = AgentClient(cast(HubClient, FakeHub()), stamped)
    agent._publish(answer)
    with pytest.raises(EnvelopeTimeoutError):
        await agent.next_envelope(lambda e: e.channel_id == "A", timeout=0.05)


async def test_a_delivery_a_wait_took_is_not_taken_again() -> None:
    person = HumanClient(cast(HubClient, FakeHub()), passport("p"))
    waiting = person.next_envelope(timeout=5)
    answer = Envelope.model_validate(envelope("A", "live"))
    person._publish(answer)
    assert await waiting == answer
    with pytest.raises(EnvelopeTimeoutError):
        await person.next_envelope(timeout=0.05)
