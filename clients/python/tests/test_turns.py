"""Which deliveries an agent answers (`is_my_turn`) and how often a failing turn runs again: backoff for what may
succeed later, at once to `on_turn_failed` for a final wire error, as `TurnAttempts` of @ag2net/client counts."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from ag2net import AgentClient, Envelope, ProtocolError, UnavailableError
from ag2net.inbox import ACK, Settle
from ag2net.turn_retries import TurnAttempts

from .fakes import AnsweringNats, fake_agent, hub_on, passport


def text(envelope_id: str, sender: str = "alice", channel: str = "c1") -> Envelope:
    return Envelope.model_validate(
        {
            "channel_id": channel,
            "sender_id": sender,
            "event_type": "ag2.msg.text",
            "event_data": {"text": envelope_id},
            "envelope_id": envelope_id,
        }
    )


async def bob_on(nc: AnsweringNats) -> AgentClient:
    return AgentClient(await hub_on(nc), passport("bob"))


def answers(allowed: bool, turns: list[dict[str, Any]]) -> AnsweringNats:
    return AnsweringNats({"canSend": lambda r: {"allowed": allowed}, "pendingTurnsFor": lambda r: {"turns": turns}})


def turn(channel: str, trigger: str | None) -> dict[str, Any]:
    return {"channel_id": channel, "triggering_envelope_id": trigger, "expected_at": "2025-01-01T00:00:00.000Z"}


async def test_where_the_hub_expects_it_only_the_trigger_of_its_turn_is_its_turn() -> None:
    # The discussion moved on to bob's next turn (trigger t2) while t1, older, still waits in bob's inbox.
    nc = answers(True, [turn("other", "x"), turn("c1", "t2")])
    bob = await bob_on(nc)
    assert [await bob.is_my_turn(text("t1")), await bob.is_my_turn(text("t2"))] == [False, True]
    assert [subject for subject, _ in nc.requests] == [
        "t.hub.v1.canSend.bob",
        "t.hub.v1.pendingTurnsFor.bob",
    ] * 2
    assert nc.requests[0][1] == {"channel_id": "c1", "event_type": None}


async def test_where_nobody_is_expected_any_envelope_it_may_answer_is_its_turn() -> None:
    bob = await bob_on(answers(True, [turn("other", "x")]))
    assert await bob.is_my_turn(text("t1")) is True


async def test_what_it_may_not_answer_is_not_its_turn_and_its_turns_are_not_read() -> None:
    nc = answers(False, [turn("c1", "t1")])
    bob = await bob_on(nc)
    assert await bob.is_my_turn(text("t1")) is False
    assert [subject for subject, _ in nc.requests] == ["t.hub.v1.canSend.bob"]


async def test_its_own_envelopes_and_protocol_events_are_never_its_turn_without_asking_the_hub() -> None:
    nc = answers(True, [])
    bob = await bob_on(nc)
    closed = text("e1").model_copy(update={"event_type": "ag2.channel.closed"})
    assert [await bob.is_my_turn(text("e0", sender="bob")), await bob.is_my_turn(closed)] == [False, False]
    assert nc.requests == []


async def test_a_final_wire_error_is_not_retried_and_is_reported_at_once(caplog: pytest.LogCaptureFixture) -> None:
    reports: list[tuple[str, str, int]] = []

    async def out_of_turn(e: Envelope, me: AgentClient) -> None:
        raise ProtocolError("channel 'c1' is closed")

    async def on_failed(e: Envelope, error: BaseException, attempts: int) -> None:
        reports.append((e.envelope_id, str(error), attempts))

    agent = fake_agent(out_of_turn, on_failed)
    with caplog.at_level(logging.ERROR, logger="ag2net"):
        assert await agent._handle(text("q1")) == ACK
    assert reports == [("q1", "channel 'c1' is closed", 1)]
    assert caplog.messages == [
        "turn failed: the hub refused it with protocol_error, a final error; not retried: channel 'c1' is closed"
    ]


async def test_a_final_error_after_failures_that_were_retried_reports_every_attempt() -> None:
    errors: list[Exception] = [UnavailableError("not the active hub"), RuntimeError("model down")]
    reports: list[tuple[str, int]] = []

    def flaky(e: Envelope, me: AgentClient) -> None:
        raise errors.pop(0) if errors else ProtocolError("not your turn")

    agent = fake_agent(flaky, lambda e, error, attempts: reports.append((type(error).__name__, attempts)))
    outcomes = [await agent._handle(text("q1")) for _ in range(3)]
    assert outcomes == [Settle(ack=False, delay=1.0), Settle(ack=False, delay=2.0), ACK]
    assert reports == [("ProtocolError", 3)]


def test_turn_attempts_back_off_give_up_and_forget_the_oldest_beyond_capacity() -> None:
    attempts = TurnAttempts(max_attempts=3, backoff=0.5, capacity=2)
    assert [attempts.fail("a"), attempts.fail("a"), attempts.fail("a")] == [(1, 0.5), (2, 1.0), (3, None)]
    assert attempts.count("a") == 0
    attempts.fail("a")
    attempts.fail("b")
    attempts.fail("c")
    assert [attempts.count(e) for e in "abc"] == [0, 1, 1]
    assert attempts.fail("b", final=True) == (2, None)
    assert attempts.count("b") == 0
    attempts.settled("c")
    assert attempts.count("c") == 0


def hide_record(violators: list[str], on_violation: str = "hide") -> Envelope:
    return Envelope.model_validate(
        {
            "channel_id": "c1",
            "sender_id": "alice",
            "audience": [*violators, "bob"],
            "event_type": "ag2.expectation.violated",
            "event_data": {
                "expectation": "turn_within",
                "violators": violators,
                "detail": {},
                "on_violation": on_violation,
            },
            "envelope_id": "v1",
        }
    )


async def test_a_hide_record_that_passes_the_turn_runs_the_handler_on_the_turns_trigger() -> None:
    log = [text("t0", sender="carol"), text("t1", sender="carol")]
    nc = AnsweringNats(
        {
            "pendingTurnsFor": lambda r: {"turns": [turn("c1", "t1")]},
            "readWal": lambda r: {"envelopes": [e.model_dump(mode="json") for e in log], "last_sequence": 2},
        }
    )
    seen: list[str] = []

    async def handler(envelope: Envelope, _client: AgentClient) -> None:
        seen.append(envelope.envelope_id)

    bob = AgentClient(await hub_on(nc), passport("bob"), handler=handler)
    assert await bob._handle(hide_record(["carol"])) == ACK
    # A record that hides bob himself, or a warning, is handed to the handler as it is.
    assert await bob._handle(hide_record(["bob"])) == ACK
    assert await bob._handle(hide_record(["carol"], on_violation="warn")) == ACK
    assert seen == ["t1", "v1", "v1"]
    assert [subject for subject, _ in nc.requests] == ["t.hub.v1.pendingTurnsFor.bob", "t.hub.v1.readWal.bob"]
