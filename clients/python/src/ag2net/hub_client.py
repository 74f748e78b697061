"""`HubClient`: one NATS connection to one hub (one prefix); registers and attaches identities."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

import nats
from nats.aio.client import Client as NatsClient

from .agent import DEFAULT_MAX_TURN_ATTEMPTS, DEFAULT_TURN_RETRY_BACKOFF, AgentClient, AgentHandler, TurnFailedListener
from .errors import ProtocolError
from .ids import new_id
from .inbox import DEFAULT_DISCONNECT_GRACE
from .models import ChannelMetadata, Passport
from .participant import HumanClient, Participant
from .rpc import DEFAULT_PREFIX, DEFAULT_RETRY_FOR, HubRpc
from .turn_locks import TURN_LOCK_TTL

_P = TypeVar("_P", bound=Participant)


class HubClient:
    """Use `await HubClient.connect(...)`; `async with` closes it."""

    def __init__(self, nc: NatsClient, prefix: str, retry_for: float, owns_connection: bool) -> None:
        self.nc = nc
        self.rpc = HubRpc(nc, prefix, retry_for)
        self._owns = owns_connection
        self._participants: set[Participant] = set()
        self._closed = False

    @staticmethod
    async def connect(
        servers: str | list[str] = "nats://127.0.0.1:4222",
        *,
        prefix: str = DEFAULT_PREFIX,
        retry_for: float = DEFAULT_RETRY_FOR,
        connection: NatsClient | None = None,
    ) -> HubClient:
        """Connects to NATS (reconnecting forever), or wraps `connection` (which it then does not close)."""
        if connection is not None:
            return HubClient(connection, prefix, retry_for, owns_connection=False)
        nc = await nats.connect(servers, max_reconnect_attempts=-1)
        return HubClient(nc, prefix, retry_for, owns_connection=True)

    async def call(
        self, op: str, request: dict[str, Any], caller_id: str | None = None, timeout: float | None = None
    ) -> dict[str, Any]:
        """Any hub operation (docs/protocol.md#rpc); returns its `result`."""
        if self._closed:
            raise RuntimeError("HubClient is closed")
        return await self.rpc.call(op, request, caller_id, timeout)

    async def _register_identity(self, passport: dict[str, Any], extra: dict[str, Any]) -> Passport:
        body = {"passport": {**passport, "agent_id": passport.get("agent_id") or new_id()}, **extra}
        result = await self.call("register", body)
        return Passport.model_validate(result["passport"])

    async def register(
        self,
        passport: dict[str, Any],
        *,
        handler: AgentHandler | None = None,
        resume: dict[str, Any] | None = None,
        skill_md: str | None = None,
        rule: dict[str, Any] | None = None,
        exclusive_turns: bool = True,
        turn_lock_ttl: float = TURN_LOCK_TTL,
        max_turn_attempts: int = DEFAULT_MAX_TURN_ATTEMPTS,
        turn_retry_backoff: float = DEFAULT_TURN_RETRY_BACKOFF,
        on_turn_failed: TurnFailedListener | None = None,
    ) -> AgentClient:
        """Registers an agent identity (a client-minted `agent_id` makes a retry idempotent) and starts its inbox."""
        if passport.get("kind") == "human":
            raise TypeError("register() is for agents; use register_human() for kind='human'")
        stamped = await self._register_identity(passport, _extras(resume, skill_md, rule))
        client = AgentClient(
            self,
            stamped,
            handler=handler,
            max_turn_attempts=max_turn_attempts,
            turn_retry_backoff=turn_retry_backoff,
            on_turn_failed=on_turn_failed,
        )
        await client._start_agent(exclusive_turns, turn_lock_ttl)
        return self._track(client)

    async def register_human(
        self,
        passport: dict[str, Any],
        *,
        auto_ack_invites: bool = True,
        resume: dict[str, Any] | None = None,
        rule: dict[str, Any] | None = None,
    ) -> HumanClient:
        """Registers a person (kind `human`); invites are accepted automatically unless `auto_ack_invites` is False."""
        if passport.get("kind") not in (None, "human"):
            raise TypeError(f"register_human() requires kind='human'; got {passport.get('kind')!r}")
        stamped = await self._register_identity({**passport, "kind": "human"}, _extras(resume, None, rule))
        client = HumanClient(self, stamped, auto_ack_invites)
        await client._start()
        return self._track(client)

    async def attach(
        self,
        name: str,
        *,
        passport: dict[str, Any] | None = None,
        handler: AgentHandler | None = None,
        exclusive_turns: bool = True,
        turn_lock_ttl: float = TURN_LOCK_TTL,
        max_turn_attempts: int = DEFAULT_MAX_TURN_ATTEMPTS,
        on_turn_failed: TurnFailedListener | None = None,
    ) -> AgentClient:
        """Reconnects to a registered agent by name: its unacked deliveries arrive again. An unknown name is registered
        with `passport`; when another replica registers it first, this attaches to that identity."""
        agent_id = (await self.call("findAgentId", {"name": name}))["agent_id"]
        if agent_id is None:
            if passport is None:
                raise TypeError(f"attach({name!r}): name is not registered; pass passport= to register it")
            try:
                return await self.register(
                    {**passport, "name": name},
                    handler=handler,
                    exclusive_turns=exclusive_turns,
                    turn_lock_ttl=turn_lock_ttl,
                    max_turn_attempts=max_turn_attempts,
                    on_turn_failed=on_turn_failed,
                )
            except ProtocolError as err:
                if "already registered" not in err.message:
                    raise
                return await self.attach(name, handler=handler, exclusive_turns=exclusive_turns)
        found = await self.get_agent(agent_id)
        client = AgentClient(
            self, found, handler=handler, max_turn_attempts=max_turn_attempts, on_turn_failed=on_turn_failed
        )
        await client._start_agent(exclusive_turns, turn_lock_ttl)
        return self._track(client)

    async def attach_human(self, name: str, *, passport: dict[str, Any] | None = None) -> HumanClient:
        """Reconnects to a person registered earlier, or registers the name when it is new."""
        agent_id = (await self.call("findAgentId", {"name": name}))["agent_id"]
        if agent_id is None:
            return await self.register_human({**(passport or {}), "name": name})
        found = await self.get_agent(agent_id)
        if found.kind != "human":
            raise TypeError(f"attach_human({name!r}): not a human identity")
        client = HumanClient(self, found)
        await client._start()
        return self._track(client)

    def _track(self, participant: _P) -> _P:
        self._participants.add(participant)
        return participant

    def _forget(self, participant: Participant) -> None:
        self._participants.discard(participant)

    async def get_agent(self, name_or_id: str) -> Passport:
        return Passport.model_validate((await self.call("getAgent", {"name_or_id": name_or_id}))["passport"])

    async def find_agent_id(self, name: str) -> str | None:
        found = (await self.call("findAgentId", {"name": name}))["agent_id"]
        return found if isinstance(found, str) else None

    async def get_channel(self, channel_id: str, caller_id: str) -> ChannelMetadata:
        """The channel's metadata, read as `caller_id` (a participant of it, or the operator caller `$operator`)."""
        result = await self.call("getChannel", {"channel_id": channel_id}, caller_id)
        return ChannelMetadata.model_validate(result["channel"])

    async def health(self) -> dict[str, Any]:
        return await self.call("health", {})

    async def close(self, grace: float = DEFAULT_DISCONNECT_GRACE) -> None:
        """Disconnects every participant (turns in flight get `grace`), then closes the connection it opened."""
        if self._closed:
            return
        await asyncio.gather(*(p.disconnect(grace) for p in list(self._participants)))
        self._closed = True
        if self._owns:
            await self.nc.close()

    async def __aenter__(self) -> HubClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()


def _extras(resume: dict[str, Any] | None, skill_md: str | None, rule: dict[str, Any] | None) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if resume is not None:
        extra["resume"] = resume
    if skill_md is not None:
        extra["skill_md"] = skill_md
    if rule is not None:
        extra["rule"] = rule
    return extra
