"""The hub's read operations over one `call`, shared by every hub client (as `HubReads` in @ag2net/client).

A deployment of several partitions answers `listChannels` per partition, each for its own channels:
`list_channels` walks them in order, page by page.

Operations that reveal channel content (`getChannel`, `listChannels`, `adapterState`) are made as `caller_id`, or as
the client's default caller when none is given: the identity a participant's hub client is bound to, `$operator` for
an operator's client.
"""

from __future__ import annotations

from typing import Any

from .models import ChannelMetadata, Passport
from .op_results import Health

#: The hub's default `limit` of list operations.
_LIST_LIMIT = 50


class HubReads:
    """Mixed into `HubClient`, which provides `call`."""

    async def call(
        self,
        op: str,
        request: dict[str, Any],
        caller_id: str | None = None,
        timeout: float | None = None,
        *,
        partition: int | None = None,
    ) -> dict[str, Any]:
        raise NotImplementedError

    async def partitions(self) -> int:
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
        following the hub's page cursors: with several partitions, partition 0's pages, then partition 1's, and so on
        (a `cursor` names a page of one partition, so it is refused there)."""
        wanted = dict(filter or {})
        limit = int(wanted.pop("limit", _LIST_LIMIT))
        cursor = wanted.pop("cursor", None)
        count = await self.partitions()
        if count > 1 and cursor is not None:
            raise ValueError(
                f"a cursor names a page of one partition; a deployment of {count} partitions is listed whole"
            )
        out: list[ChannelMetadata] = []
        for partition in range(count):
            while len(out) < limit:
                request = {**wanted, "limit": limit - len(out), "cursor": cursor}
                page = await self.call("listChannels", request, caller_id, partition=None if count == 1 else partition)
                out.extend(ChannelMetadata.model_validate(c) for c in page["channels"])
                cursor = page.get("next_cursor")
                if cursor is None:
                    break
            if len(out) >= limit:
                break
        return out

    async def adapter_state(self, channel_id: str, caller_id: str | None = None) -> dict[str, Any] | None:
        """A channel's adapter state as the caller may see it; None when it has none."""
        state = (await self.call("adapterState", {"channel_id": channel_id}, caller_id))["state"]
        return state if isinstance(state, dict) else None

    async def health(self) -> Health:
        """What the hub answering `health` reports about itself, among it the deployment's partition count."""
        return Health.model_validate(await self.call("health", {}))
