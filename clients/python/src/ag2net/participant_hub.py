"""`ParticipantHub`: what a participant calls on the hub client bound to it (`participant.hub`)."""

from __future__ import annotations

from typing import Any, Protocol

from nats.aio.client import Client as NatsClient

from .models import ChannelMetadata, Passport
from .rpc import HubRpc
from .turn_locks import HubCaller


class ParticipantHub(HubCaller, Protocol):
    """The hub client a participant runs on: its connection and RPC for the inbox, `call` as the identity, the reads
    it makes for itself. `HubClient` is one; participants depend on this, not on `HubClient`, which builds them."""

    nc: NatsClient
    rpc: HubRpc

    async def call(
        self,
        op: str,
        request: dict[str, Any],
        caller_id: str | None = None,
        timeout: float | None = None,
        *,
        partition: int | None = None,
    ) -> dict[str, Any]: ...

    async def partitions(self) -> int: ...

    async def get_agent(self, name_or_id: str) -> Passport: ...

    async def get_channel(self, channel_id: str, caller_id: str | None = None) -> ChannelMetadata: ...

    async def list_channels(
        self,
        filter: dict[str, Any] | None = None,  # noqa: A002 - the TypeScript name
        caller_id: str | None = None,
    ) -> list[ChannelMetadata]: ...

    async def adapter_state(self, channel_id: str, caller_id: str | None = None) -> dict[str, Any] | None: ...

    async def _forget(self, participant: Any) -> None:
        """Told that `participant` disconnected (a client bound to that identity then closes too)."""
        ...
