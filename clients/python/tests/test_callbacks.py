"""User callbacks may be `async def`s or plain functions: an agent's handler and `on_turn_failed`, a person's
envelope callbacks. Predicates are plain functions; an `async def` one is refused when given."""

from __future__ import annotations

from typing import cast

import pytest

from ag2net import AgentClient, Envelope, HubClient, HumanClient
from ag2net.inbox import ACK, Settle

from .fakes import FakeHub, fake_agent, passport


def question(envelope_id: str = "q1") -> Envelope:
    return Envelope.model_validate(
        {"channel_id": "c1", "sender_id": "alice", "event_type": "ag2.msg.text", "envelope_id": envelope_id}
    )


async def test_an_agent_handler_may_be_a_plain_function_or_an_async_def() -> None:
    seen: list[str] = []

    def plain(e: Envelope, me: AgentClient) -> None:
        seen.append(f"plain {e.envelope_id} {me.agent_id}")

    async def coroutine(e: Envelope, me: AgentClient) -> None:
        seen.append(f"async {e.envelope_id} {me.agent_id}")

    agent = fake_agent(plain)
    assert await agent._handle(question("q1")) == ACK
    agent.on_envelope(coroutine)
    assert await agent._handle(question("q2")) == ACK
    assert seen == ["plain q1 bob", "async q2 bob"]


@pytest.mark.parametrize("kind", ["plain", "async"])
async def test_on_turn_failed_may_be_a_plain_function_or_an_async_def(kind: str) -> None:
    reports: list[tuple[str, str, int]] = []

    def failing(e: Envelope, me: AgentClient) -> None:
        raise RuntimeError("model down")

    def plain(e: Envelope, error: BaseException, attempts: int) -> None:
        reports.append((e.envelope_id, str(error), attempts))

    async def coroutine(e: Envelope, error: BaseException, attempts: int) -> None:
        plain(e, error, attempts)

    agent = fake_agent(failing, plain if kind == "plain" else coroutine, max_turn_attempts=2)
    assert [await agent._handle(question()) for _ in range(2)] == [Settle(ack=False, delay=1.0), ACK]
    assert reports == [("q1", "model down", 2)]


async def test_a_persons_callbacks_may_be_plain_functions_or_async_defs_and_run_in_order() -> None:
    seen: list[str] = []

    async def coroutine(e: Envelope) -> None:
        seen.append(f"async {e.envelope_id}")

    person = HumanClient(cast(HubClient, FakeHub()), passport("p"))
    person.on_envelope(lambda e: seen.append(f"plain {e.envelope_id}"))
    person.on_envelope(coroutine)
    assert await person._handle(question()) == ACK
    assert seen == ["plain q1", "async q1"]


async def test_an_async_predicate_is_refused_where_it_is_given() -> None:
    async def predicate(e: Envelope) -> bool:
        return True

    agent = fake_agent(lambda e, me: None)
    message = r"^a predicate is a plain function \(envelope\) -> bool, not an async def$"
    with pytest.raises(TypeError, match=message):
        agent.subscribe(predicate)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=message):
        agent.next_envelope(predicate)  # type: ignore[arg-type]
