"""Turn locks through the hub's operations, as the TypeScript `TurnLocks`: the requests each call sends (as the
agent, with this replica's holder id and the lock's TTL), and how an agent's turn runs around them."""

from __future__ import annotations

import asyncio
from typing import cast

import pytest

from ag2net import AgentClient, Envelope, HubClient
from ag2net.inbox import ACK, Settle
from ag2net.models import Passport
from ag2net.turn_locks import TurnLocks

from .fakes import FakeHub


def trigger(channel: str = "c1") -> Envelope:
    return Envelope.model_validate(
        {
            "channel_id": channel,
            "sender_id": "p1",
            "event_type": "ag2.msg.text",
            "event_data": {"text": "hi"},
            "envelope_id": "e1",
        }
    )


def agent_on(hub: FakeHub, handled: list[str], ttl: float = 6.0, wait: asyncio.Event | None = None) -> AgentClient:
    async def handler(e: Envelope, me: AgentClient) -> None:
        handled.append(e.envelope_id)
        if wait is not None:
            await wait.wait()

    agent = AgentClient(cast(HubClient, hub), Passport.model_validate({"name": "a", "agent_id": "a1"}), handler=handler)
    agent._locks = TurnLocks(hub, "a1", holder="replica1", ttl=ttl)
    return agent


async def test_each_call_names_the_agent_the_holder_and_the_ttl() -> None:
    hub = FakeHub({"acquireTurnLock": {"acquired": True}, "renewTurnLock": {"renewed": False}, "releaseTurnLock": {}})
    locks = TurnLocks(hub, "a1", holder="replica1", ttl=6.0)
    assert (await locks.acquire("c1"), await locks.renew("c1")) == (True, False)
    await locks.release("c1")
    assert hub.calls == [
        ("acquireTurnLock", {"channel_id": "c1", "holder": "replica1", "ttl_ms": 6000}, "a1", 2.0),
        ("renewTurnLock", {"channel_id": "c1", "holder": "replica1"}, "a1", 2.0),
        ("releaseTurnLock", {"channel_id": "c1", "holder": "replica1"}, "a1", 2.0),
    ]


@pytest.mark.parametrize("ttl", [0.5, 120.5])
def test_a_ttl_the_hub_refuses_is_refused_at_once(ttl: float) -> None:
    with pytest.raises(ValueError, match=r"^turn lock TTL must be 1\.0 to 120\.0 s"):
        TurnLocks(FakeHub({}), "a1", ttl=ttl)


async def test_a_turn_runs_holding_the_lock_and_releases_it() -> None:
    hub = FakeHub({"acquireTurnLock": {"acquired": True}, "releaseTurnLock": {}})
    handled: list[str] = []
    assert await agent_on(hub, handled)._handle(trigger()) == ACK
    assert (handled, [c[0] for c in hub.calls]) == (["e1"], ["acquireTurnLock", "releaseTurnLock"])


@pytest.mark.parametrize(
    "answer", [{"acquired": False}, TimeoutError("no hub answered")], ids=["held elsewhere", "no answer"]
)
async def test_a_lock_held_elsewhere_or_unanswered_hands_the_delivery_back_unhandled(answer: object) -> None:
    hub = FakeHub({"acquireTurnLock": answer, "releaseTurnLock": {}})
    handled: list[str] = []
    assert await agent_on(hub, handled)._handle(trigger()) == Settle(ack=False, delay=0.5)
    assert (handled, [c[0] for c in hub.calls]) == ([], ["acquireTurnLock"])


async def test_a_protocol_event_runs_without_a_lock() -> None:
    hub = FakeHub({})
    handled: list[str] = []
    invite = trigger().model_copy(update={"event_type": "ag2.channel.invite", "event_data": {"channel_id": "c1"}})
    assert await agent_on(hub, handled)._handle(invite) == ACK
    assert (handled, hub.calls) == (["e1"], [])


async def test_a_renewal_that_finds_the_lock_lost_cancels_the_turn_and_releases_nothing() -> None:
    hub = FakeHub({"acquireTurnLock": {"acquired": True}, "renewTurnLock": {"renewed": False}, "releaseTurnLock": {}})
    handled: list[str] = []
    never = asyncio.Event()
    outcome = await asyncio.wait_for(agent_on(hub, handled, ttl=1.0, wait=never)._handle(trigger()), timeout=10)
    assert (outcome, handled, [c[0] for c in hub.calls]) == (
        Settle(ack=False, delay=0.5),
        ["e1"],
        ["acquireTurnLock", "renewTurnLock"],
    )
