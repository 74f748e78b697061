"""Starting a participant on the hub client bound to its identity, once the hub registered or attached it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from .agent import AgentClient, AgentHandler, TurnFailedListener
from .human import HumanClient
from .models import Passport
from .participant import Participant
from .participant_hub import ParticipantHub

_P = TypeVar("_P", bound=Participant)
#: Builds and starts a participant on its bound hub client; raises when it cannot start.
ParticipantStart = Callable[[ParticipantHub, Passport], Awaitable[_P]]


def agent_starter(
    handler: AgentHandler | None,
    *,
    exclusive_turns: bool,
    turn_lock_ttl: float,
    max_turn_attempts: int,
    turn_retry_backoff: float,
    on_turn_failed: TurnFailedListener | None,
) -> ParticipantStart[AgentClient]:
    """Starts an agent with these options: its inbox, and its turn locks when `exclusive_turns`."""

    async def start(hub: ParticipantHub, passport: Passport) -> AgentClient:
        client = AgentClient(
            hub,
            passport,
            handler=handler,
            max_turn_attempts=max_turn_attempts,
            turn_retry_backoff=turn_retry_backoff,
            on_turn_failed=on_turn_failed,
        )
        await client._start_agent(exclusive_turns, turn_lock_ttl)
        return client

    return start


def human_starter(auto_ack_invites: bool) -> ParticipantStart[HumanClient]:
    """Starts a person's client: its inbox."""

    async def start(hub: ParticipantHub, passport: Passport) -> HumanClient:
        client = HumanClient(hub, passport, auto_ack_invites)
        await client._start()
        return client

    return start
