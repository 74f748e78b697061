"""Turn locks shared with the TypeScript client: one KV key per (agent, channel) in `<P>_turnlocks`.

Same protocol as `TurnLocks`/`TurnLease` in @ag2net/client, so TypeScript and Python replicas of one agent exclude
each other: taken with `create` (one replica wins), renewed every TTL/3 with `update` on the revision this replica
wrote, released with a subject purge once the key is checked to still be ours. The bucket's TTL (6 s by default,
fixed by whoever creates the bucket) frees the lock of a replica that stopped renewing. The holder gives the turn up
(cancels it) when a renewal finds the revision moved, or when a whole TTL passed since the last renewal known to
have succeeded was sent, so that two turns of one channel never overlap.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from nats.aio.client import Client as NatsClient
from nats.js.client import JetStreamContext
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from .errors import TurnLockLostError
from .rpc import HubNames

#: Default lifetime of a turn lock that is not renewed, in seconds (`TURN_LOCK_TTL_MS` = 6 000).
TURN_LOCK_TTL = 6.0


@dataclass
class HeldTurnLock:
    key: str
    revision: int


class TurnLocks:
    """The lock bucket of one hub, as seen by one replica (`holder`)."""

    def __init__(self, kv: KeyValue, js: JetStreamContext, bucket: str, holder: str, ttl: float) -> None:
        self._kv = kv
        self._js = js
        self._bucket = bucket
        self._holder = holder.encode()
        self.ttl = ttl

    @staticmethod
    async def open(nc: NatsClient, names: HubNames, holder: str, ttl: float = TURN_LOCK_TTL) -> TurnLocks:
        """Opens the bucket, creating it (with the inbox stream's replica count) when this is the first client."""
        js = nc.jetstream()
        bucket = names.turn_locks_bucket
        try:
            kv = await js.key_value(bucket)
            status = await kv.status()
            found = status.ttl or 0.0
        except BucketNotFoundError:
            info = await js.stream_info(names.inbox_stream)
            kv = await js.create_key_value(bucket=bucket, history=1, ttl=ttl, replicas=info.config.num_replicas or 1)
            found = ttl
        return TurnLocks(kv, js, bucket, holder, found if found > 0 else ttl)

    async def acquire(self, agent_id: str, channel_id: str) -> HeldTurnLock | None:
        """Takes the lock of (agent, channel); `None` when another replica holds it."""
        key = f"{agent_id}.{channel_id}"
        try:
            return HeldTurnLock(key, await self._kv.create(key, self._holder))
        except KeyWrongLastSequenceError:
            return None

    async def renew(self, lock: HeldTurnLock) -> bool:
        """True when renewed, False when lost; raises when the outcome is unknown (no answer)."""
        try:
            lock.revision = await self._kv.update(lock.key, self._holder, last=lock.revision)
            return True
        except KeyWrongLastSequenceError:
            return False

    async def release(self, lock: HeldTurnLock) -> None:
        """Gives the lock up, unless it already lapsed and another replica holds it now."""
        try:
            entry = await self._kv.get(lock.key)
        except KeyNotFoundError:
            return
        if entry.revision != lock.revision:
            return
        await self._js.purge_stream(f"KV_{self._bucket}", subject=f"$KV.{self._bucket}.{lock.key}")


class TurnLease:
    """The heartbeat of a held lock: renews every TTL/3 and calls `on_lost` once when the lock is lost."""

    def __init__(
        self,
        ttl: float,
        renew: Callable[[], Awaitable[bool]],
        acquired_at: float,
        on_lost: Callable[[TurnLockLostError], None],
    ) -> None:
        self._ttl = ttl
        self._renew = renew
        self._on_lost = on_lost
        self._confirmed_sent_at = acquired_at
        self.lost: TurnLockLostError | None = None
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        interval = max(0.001, self._ttl / 3)
        while True:
            left = self._confirmed_sent_at + self._ttl - time.monotonic()
            if left <= 0:
                self._lose(TurnLockLostError(f"turn lock not renewed within {self._ttl} s"))
                return
            await asyncio.sleep(min(interval, left))
            sent_at = time.monotonic()
            remaining = self._confirmed_sent_at + self._ttl - sent_at
            if remaining <= 0:
                continue
            try:
                # An answer later than the deadline is no use: by then the turn must have been given up.
                held = await asyncio.wait_for(self._renew(), timeout=remaining)
            except Exception:  # noqa: BLE001 - no answer: the deadline decides
                continue
            if not held:
                self._lose(TurnLockLostError("turn lock taken by another replica or lapsed"))
                return
            self._confirmed_sent_at = sent_at

    def _lose(self, reason: TurnLockLostError) -> None:
        self.lost = reason
        self._on_lost(reason)

    def stop(self) -> None:
        self._task.cancel()
