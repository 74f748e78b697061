"""The hub roster and who holds each partition (`hub-roster.ts` of @ag2net/client).

The roster is one request on `<prefix>.hubs.v1.ping` (`HubNames.hubs_ping`, no queue group) that every hub of the
prefix answers, active or standby, each with its own `Health`: its role, and the partitions it holds (`held`), each at
its lease epoch. A partition that no answering hub reports holding has nobody serving its channels.

```python
hubs = await hub.hubs()
holders = partition_holders(hubs, hubs[0].partitions) if hubs else []
unheld = [p.partition for p in holders if not p.held_by]
```
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from typing import Protocol

import nats.errors
from pydantic import BaseModel, Field, ValidationError

from .errors import AccessDeniedError
from .op_results import Health, HeldPartition
from .rpc import REFUSAL_POLL, HubNames, refused_publish

log = logging.getLogger("ag2net")

#: How long `HubClient.hubs` collects answers by default, in seconds (`DEFAULT_ROSTER_WINDOW_MS`).
DEFAULT_ROSTER_WINDOW = 1.0

#: The status header nats-server sets on the reply to a request nobody subscribes to.
_STATUS_HEADER = "Status"
_NO_RESPONDERS = "503"


class RosterMsg(Protocol):
    """What the roster reads of a reply (a `nats.aio.msg.Msg`)."""

    @property
    def data(self) -> bytes: ...

    @property
    def headers(self) -> dict[str, str] | None: ...


class RosterSubscription(Protocol):
    """What the roster needs of its reply subscription (a `nats.aio.subscription.Subscription`)."""

    async def next_msg(self, timeout: float | None = 1.0) -> RosterMsg: ...

    async def unsubscribe(self, limit: int = 0) -> None: ...


class RosterConnection(Protocol):
    """What the roster needs of a NATS connection (a `nats.aio.client.Client`)."""

    def new_inbox(self) -> str: ...

    async def subscribe(self, subject: str) -> RosterSubscription: ...

    async def publish(self, subject: str, payload: bytes = b"", reply: str = "") -> None: ...


class PartitionHolder(BaseModel):
    """A hub that reports holding a partition, and its lease epoch of that partition."""

    hub_id: str
    epoch: int = Field(ge=0)


class PartitionHolders(BaseModel):
    """A partition and the hubs that report holding it (`PartitionHolders` of @ag2net/client): one normally, two for a
    moment while the partition moves, none while nobody serves its channels."""

    partition: int = Field(ge=0)
    held_by: list[PartitionHolder]


async def hub_roster(nc: RosterConnection, names: HubNames, timeout: float = DEFAULT_ROSTER_WINDOW) -> list[Health]:
    """Every hub of the prefix that answers one roster request within `timeout` seconds: the active hubs first, then
    the standbys, each group by hub id. A reply that is not a valid `Health` is dropped with a warning; no hub at all
    (no responders) is an empty list, at once. Only the operator may ask: on any other connection NATS refuses the
    request, raised as `AccessDeniedError`."""
    subject = names.hubs_ping
    inbox = nc.new_inbox()
    sub = await nc.subscribe(inbox)
    refused_before = getattr(nc, "last_error", None)
    hubs: list[Health] = []
    try:
        await nc.publish(subject, b"{}", reply=inbox)
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                # Short waits: nats-py reports a refused publish only on the connection, never to the subscription.
                msg = await sub.next_msg(timeout=min(left, REFUSAL_POLL))
            except nats.errors.TimeoutError:
                _raise_if_refused(nc, subject, refused_before)
                continue
            if msg.headers is not None and msg.headers.get(_STATUS_HEADER) == _NO_RESPONDERS:
                return []
            health = _health_of(msg.data)
            if isinstance(health, str):
                log.warning("roster reply dropped (%s): %s", subject, health)
            else:
                hubs.append(health)
        _raise_if_refused(nc, subject, refused_before)
    finally:
        await sub.unsubscribe()
    return sorted(hubs, key=lambda h: (h.role != "active", h.hub_id))


def _raise_if_refused(nc: object, subject: str, before: object) -> None:
    refusal = refused_publish(nc, subject, before)
    if refusal is not None:
        raise AccessDeniedError("only the operator may ask for the hub roster") from refusal


def _health_of(data: bytes) -> Health | str:
    """The reply's `Health`, or why it is not one."""
    try:
        reply = json.loads(data)
    except ValueError:
        return "not JSON"
    if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
        return "not an RPC reply"
    if reply["ok"] is False:
        error = reply.get("error")
        if not isinstance(error, dict):
            return "not an RPC reply"
        return f"error {error.get('code')}: {error.get('message')}"
    try:
        return Health.model_validate(reply.get("result"))
    except ValidationError:
        return "not a Health"


def held_by(hub: Health) -> list[HeldPartition]:
    """The partitions `hub` reports holding (`heldBy` of @ag2net/client). A hub from before partitions reports none:
    active, it holds the only one, at its epoch."""
    if not hub.held and hub.role == "active" and hub.partitions == 1:
        return [HeldPartition(partition=0, epoch=hub.epoch)]
    return list(hub.held)


def partition_holders(hubs: Sequence[Health], partitions: int) -> list[PartitionHolders]:
    """Every partition from 0 to `partitions` - 1 with the hubs of a roster (`HubClient.hubs`) holding it, in the
    roster's order (`partitionHolders` of @ag2net/client): one holder normally, two for a moment while a partition
    moves, none while nobody serves it."""
    return [
        PartitionHolders(
            partition=k,
            held_by=[
                PartitionHolder(hub_id=hub.hub_id, epoch=held.epoch)
                for hub in hubs
                for held in held_by(hub)
                if held.partition == k
            ],
        )
        for k in range(partitions)
    ]
