"""Fakes of the unit tests: NATS connections that answer from a table or a script, a hub client that is never called
or records its calls, and the hub's answers they return (`health_result`, `channel_result`)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import nats.errors
from nats.aio.client import Client as NatsClient

from ag2net import AgentClient, HubClient
from ag2net.agent import AgentHandler, TurnFailedListener
from ag2net.models import Passport
from ag2net.rpc import hub_names

#: A reply body: `{"ok": …}`, or raw bytes for a reply that is not JSON.
Body = dict[str, Any] | bytes


@dataclass
class FakeReply:
    """A message on a reply subject: its body, and nats-server's status header for a request nobody subscribes to."""

    data: bytes
    headers: dict[str, str] | None = None


#: What nats-server sends to a request's reply subject when nobody subscribes to its subject.
NO_RESPONDERS = FakeReply(b"", {"Status": "503"})


def ok(result: dict[str, Any]) -> dict[str, Any]:
    return {"ok": True, "result": result}


def reply_of(body: Body) -> FakeReply:
    return FakeReply(body if isinstance(body, bytes) else json.dumps(body).encode())


class FakeSubscription:
    """A subscription read with `next_msg`, as the roster reads its replies."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[FakeReply] = asyncio.Queue()
        self.unsubscribed = False

    async def next_msg(self, timeout: float | None = 1.0) -> FakeReply:
        try:
            return await asyncio.wait_for(self.queue.get(), timeout)
        except TimeoutError:
            raise nats.errors.TimeoutError from None

    async def unsubscribe(self, limit: int = 0) -> None:
        self.unsubscribed = True


class FakeNats:
    """A NATS connection that records every request and publish as `(subject, request)`. A request is answered with
    `answer(subject, request, timeout)` (which may raise instead); a publish with a reply subject (the roster's) gets
    one reply per body in `roster`, or nats-server's no-responders status when it is empty. `last_error` is where
    nats-py keeps the server's latest error (a refused publish)."""

    def __init__(self, roster: Sequence[Body] = ()) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.roster = list(roster)
        self.subscriptions: dict[str, FakeSubscription] = {}
        self.last_error: Exception | None = None

    @property
    def subjects(self) -> list[str]:
        return [subject for subject, _ in self.requests]

    async def answer(self, subject: str, request: dict[str, Any], timeout: float) -> Body:
        raise AssertionError(f"unexpected request on {subject}")

    async def request(self, subject: str, payload: bytes = b"", timeout: float = 0.5) -> FakeReply:
        request = json.loads(payload)
        self.requests.append((subject, request))
        return reply_of(await self.answer(subject, request, timeout))

    def new_inbox(self) -> str:
        return f"_INBOX.fake.{len(self.subscriptions)}"

    async def subscribe(self, subject: str) -> FakeSubscription:
        self.subscriptions[subject] = FakeSubscription()
        return self.subscriptions[subject]

    def published(self, subject: str) -> list[FakeReply]:
        """The replies a publish on `subject` gets."""
        return [reply_of(body) for body in self.roster] if self.roster else [NO_RESPONDERS]

    async def publish(self, subject: str, payload: bytes = b"", reply: str = "") -> None:
        self.requests.append((subject, json.loads(payload)))
        for message in self.published(subject):
            self.subscriptions[reply].queue.put_nowait(message)


class AnsweringNats(FakeNats):
    """Answers each request with `answers[op](request)` (an ok result)."""

    def __init__(self, answers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]]) -> None:
        super().__init__()
        self.answers = answers

    async def answer(self, subject: str, request: dict[str, Any], timeout: float) -> Body:
        return ok(self.answers[subject.split(".")[3]](request))


#: An answer of `RoutedNats`: `(request, partition)` → result, the partition being the one in the subject (None for a
#: subject without one).
Answer = Callable[[dict[str, Any], int | None], dict[str, Any]]


class RoutedNats(FakeNats):
    """A deployment of `partitions` partitions: answers `health` with that count (None: an older hub's health, which
    does not say) and every other op with `answers[op](request, partition)`. The first `health_errors` answers to
    `health` are errors; while `health_gate` is set and not yet set off, `health` waits for it."""

    def __init__(
        self,
        partitions: int | None,
        answers: dict[str, Answer] | None = None,
        health_errors: int = 0,
        roster: Sequence[Body] = (),
    ) -> None:
        super().__init__(roster)
        self.partitions = partitions
        self.answers = answers or {}
        self.health_errors = health_errors
        self.health_gate: asyncio.Event | None = None

    async def answer(self, subject: str, request: dict[str, Any], timeout: float) -> Body:
        await asyncio.sleep(0)
        parts = subject.split(".")
        op = parts[3]
        if op != "health":
            return ok(self.answers[op](request, int(parts[4]) if len(parts) == 6 else None))
        if self.health_gate is not None:
            await self.health_gate.wait()
        if self.health_errors > 0:
            self.health_errors -= 1
            return {"ok": False, "error": {"code": "internal", "message": "boom"}}
        return ok(health_result(partitions=self.partitions))


class ScriptedNats(FakeNats):
    """Answers requests from a script, in order: an exception to raise, or a reply body; once it ran out, with `then`
    (None: no responders)."""

    def __init__(self, script: list[Exception | dict[str, Any]], then: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.script = script
        self.then = then

    async def answer(self, subject: str, request: dict[str, Any], timeout: float) -> Body:
        step = self.script.pop(0) if self.script else self.then
        if step is None:
            raise nats.errors.NoRespondersError
        if isinstance(step, Exception):
            raise step
        return step


class RefusingNats(FakeNats):
    """A connection on which every request goes unanswered until its timeout, and every publish unanswered; `refuse`
    sets the error nats-py keeps when the server refuses a publish (lower-cased, as its parser hands it over) while
    the request waits, or 10 ms after the publish."""

    def __init__(self, refuse: str | None) -> None:
        super().__init__()
        self.refuse = refuse

    def _refused(self) -> None:
        if self.refuse is not None:
            self.last_error = nats.errors.Error(f'nats: permissions violation for publish to "{self.refuse.lower()}"')

    async def answer(self, subject: str, request: dict[str, Any], timeout: float) -> Body:
        await asyncio.sleep(0.01)
        self._refused()
        await asyncio.sleep(timeout)
        raise nats.errors.TimeoutError

    def published(self, subject: str) -> list[FakeReply]:
        asyncio.get_running_loop().call_later(0.01, self._refused)
        return []


#: A call of `FakeHub`: op, request, caller, timeout.
Call = tuple[str, dict[str, Any], str | None, float | None]


class FakeRpc:
    names = hub_names("t")


class FakeHub:
    """What a participant needs of its hub client: `call` records each call and answers from `answers` (by op; an
    exception is raised). Without answers, for a participant whose hub is never called."""

    nc = None
    rpc = FakeRpc()

    def __init__(self, answers: dict[str, Any] | None = None) -> None:
        self.answers = answers or {}
        self.calls: list[Call] = []

    async def call(
        self, op: str, request: dict[str, Any], caller_id: str | None = None, timeout: float | None = None
    ) -> dict[str, Any]:
        self.calls.append((op, request, caller_id, timeout))
        answer = self.answers[op]
        if isinstance(answer, BaseException):
            raise answer
        return cast(dict[str, Any], answer)


def passport(agent_id: str) -> Passport:
    """A stamped passport whose name is its id."""
    return Passport.model_validate({"name": agent_id, "agent_id": agent_id})


def fake_agent(
    handler: AgentHandler, on_turn_failed: TurnFailedListener | None = None, max_turn_attempts: int = 5
) -> AgentClient:
    """The agent `bob` on a hub client that is never called (no turn locks)."""
    return AgentClient(
        cast(HubClient, FakeHub()),
        passport("bob"),
        handler=handler,
        on_turn_failed=on_turn_failed,
        max_turn_attempts=max_turn_attempts,
    )


async def hub_on(nc: FakeNats, partitions: int | None = 1, *, operator: bool = False) -> HubClient:
    """A hub client (prefix `t`) whose requests go to `nc`, of a deployment of `partitions` partitions (None: asked of
    the hub); `operator`: the operator's."""
    return await HubClient.connect(
        connection=cast(NatsClient, nc), prefix="t", partitions=partitions, operator=operator
    )


def health_result(
    hub_id: str = "h",
    *,
    role: str = "active",
    epoch: int = 1,
    partitions: int | None = None,
    held: Sequence[tuple[int, int]] = (),
) -> dict[str, Any]:
    """A hub's `health` result, holding the partitions `held` as `(partition, epoch)`; `partitions` None: an older
    hub's, which says neither how many partitions there are nor which it holds."""
    result: dict[str, Any] = {
        "hub_id": hub_id,
        "role": role,
        "epoch": epoch,
        "active_channels": 0,
        "registered_agents": 0,
        "adapters_loaded": 0,
        "uptime_seconds": 1,
        "quarantined": 0,
        "dead_letters": 0,
    }
    if partitions is None:
        return result
    return {**result, "partitions": partitions, "held": [{"partition": k, "epoch": e} for k, e in held]}


def channel_result(channel_id: str, creator: str = "alice") -> dict[str, Any]:
    """The metadata of an active conversation `creator` opened."""
    return {
        "channel_id": channel_id,
        "manifest": {"type": "conversation"},
        "creator_id": creator,
        "participants": [{"agent_id": creator, "role": "initiator", "order": 0}],
        "state": "active",
        "created_at": "2025-01-01T00:00:00.000Z",
    }
