"""Shared paths and fakes of the test suite."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from nats.aio.client import Client as NatsClient

from ag2net import AgentClient, HubClient
from ag2net.agent import AgentHandler, TurnFailedListener
from ag2net.models import Passport
from ag2net.rpc import hub_names

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "conformance" / "fixtures"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


class FakeRpc:
    names = hub_names("t")


class FakeHub:
    """What a participant needs of its hub client when nothing is called."""

    nc = None
    rpc = FakeRpc()


def fake_agent(
    handler: AgentHandler, on_turn_failed: TurnFailedListener | None = None, max_turn_attempts: int = 5
) -> AgentClient:
    """The agent `bob` on a hub client that is never called (no turn locks)."""
    return AgentClient(
        cast(HubClient, FakeHub()),
        Passport.model_validate({"name": "bob", "agent_id": "bob"}),
        handler=handler,
        on_turn_failed=on_turn_failed,
        max_turn_attempts=max_turn_attempts,
    )


@dataclass
class FakeReply:
    data: bytes


class AnsweringNats:
    """Answers each request with `answers[op](request)` (an ok result) and records `(subject, request)`."""

    def __init__(self, answers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]]) -> None:
        self.answers = answers
        self.requests: list[tuple[str, dict[str, Any]]] = []

    async def request(self, subject: str, payload: bytes = b"", timeout: float = 0.5) -> FakeReply:
        request = json.loads(payload)
        self.requests.append((subject, request))
        op = subject.split(".")[3]
        return FakeReply(json.dumps({"ok": True, "result": self.answers[op](request)}).encode())


async def hub_on(nc: object, partitions: int | None = 1) -> HubClient:
    """A hub client (prefix `t`) whose requests go to `nc`, of a deployment of `partitions` partitions (None: asked of
    the hub)."""
    return await HubClient.connect(connection=cast(NatsClient, nc), prefix="t", partitions=partitions)
