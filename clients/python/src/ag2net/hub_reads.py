"""The hub's read operations over one `call`, shared by every hub client (as `HubReads` in @ag2net/client).

Operations that reveal channel content (`getChannel`, `listChannels`, `adapterState`) are made as `caller_id`, or as
the client's default caller when none is given: the identity a participant's hub client is bound to, `$operator` for
an operator's client.
"""

from __future__ import annotations

from typing import Any

from .models import ChannelMetadata, Passport

#: The hub's default `limit` of list operations.
_LIST_LIMIT = 50


class HubReads:
    """Mixed into `HubClient`, which provides `call`."""

    async def call(
        self, op: str, request: dict[str, Any], caller_id: str | None = None, timeout: float | None = None
    ) -> dict[str, Any]:
        raise NotImplementedError

    async def get_agent(self, name_or_id: str) -> Passport:
        return Passport.model_validate((await self.call("getAgent", {"name_or_id": name_or_id}))["passport"])

    async def find_agent_id(self, name: str) -> str | None:
        found = (await self.call("findAgentId", {"name": name}))["agent_id"]
        return found if isinstance(found, str) else None

    async def get_channel(self, channel_id: str, caller_id: str | None = None) -> ChannelMetadata:
        """The channel's metadata, read as `caller_id` (default: this client's default caller): a participant of it,
        or the operator caller `$operator`."""
        result = await self.call("getChannel", {"channel_id": channel_id}, caller_id)
        return ChannelMetadata.model_validate(result["channel"])

    async def list_channels(
        self,
        filter: dict[str, Any] | None = None,  # noqa: A002 - the TypeScript name
        caller_id: str | None = None,
    ) -> list[ChannelMetadata]:
        """Up to `filter["limit"]` (default 50) channels the caller takes part in (every channel for the operator),
        following the hub's page cursors."""
        wanted = dict(filter or {})
        limit = int(wanted.pop("limit", _LIST_LIMIT))
        cursor = wanted.pop("cursor", None)
        out: list[ChannelMetadata] = []
        while True:
            page = await self.call("listChannels", {**wanted, "limit": limit - len(out), "cursor": cursor}, caller_id)
            out.extend(ChannelMetadata.model_validate(c) for c in page["channels"])
            cursor = page.get("next_cursor")
            if cursor is None or len(out) >= limit:
                return out

    async def adapter_state(self, channel_id: str, caller_id: str | None = None) -> dict[str, Any] | None:
        """A channel's adapter state as the caller may see it; None when it has none."""
        state = (await self.call("adapterState", {"channel_id": channel_id}, caller_id))["state"]
        return state if isinstance(state, dict) else None

    async def health(self) -> dict[str, Any]:
        return await self.call("health", {})
