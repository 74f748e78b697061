"""Turn locks kept by the hub (`acquireTurnLock`, `renewTurnLock`, `releaseTurnLock`), shared with TypeScript replicas.

Same protocol as `TurnLocks`/`TurnLease` in @ag2net/client, so TypeScript and Python replicas of one agent exclude
each other: each replica calls the hub as the agent with its own holder id; the hub grants one holder at a time and
lets a lock lapse `ttl_ms` after its last acquisition or renewal (by the hub's clock, kept across a failover). The
holder renews every TTL/3 and gives the turn up (cancels it) when a renewal answers that the lock is lost, or when a
whole TTL passed since the last renewal known to have succeeded was sent, so that two turns of one channel never
overlap. A replica needs no right on NATS beyond calling the hub as its agent.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from .errors import TurnLockLostError
from .ids import new_id

#: Default lifetime of a turn lock that is not renewed, in seconds (`TURN_LOCK_TTL_MS` = 6 000).
TURN_LOCK_TTL = 6.0
#: The TTLs the hub accepts (`acquireTurnLock`'s `ttl_ms`: 1 000 to 120 000), in seconds.
MIN_TURN_LOCK_TTL = 1.0
MAX_TURN_LOCK_TTL = 120.0


class HubCaller(Protocol):
    """What `TurnLocks` needs of a hub client: `HubClient.call`."""

    async def call(
        self, op: str, request: dict[str, Any], caller_id: str | None = None, timeout: float | None = None
    ) -> dict[str, Any]: ...


class TurnLocks:
    """One replica's view of an agent's turn locks (`holder`: this replica's id). Every call is retried like any
    idempotent operation (no hub answering, `unavailable`, a timed-out attempt); each attempt waits at most a third of
    the TTL, so that a lost request is sent again while the lock is still alive. A call raises when the hub stayed
    unreachable past the client's retry time: the outcome is then unknown."""

    def __init__(self, hub: HubCaller, agent_id: str, *, holder: str | None = None, ttl: float = TURN_LOCK_TTL) -> None:
        if not MIN_TURN_LOCK_TTL <= ttl <= MAX_TURN_LOCK_TTL:
            raise ValueError(f"turn lock TTL must be {MIN_TURN_LOCK_TTL} to {MAX_TURN_LOCK_TTL} s; got {ttl}")
        self._hub = hub
        self._agent_id = agent_id
        self.holder = holder or new_id()
        self.ttl = ttl
        self._attempt_timeout = max(0.25, ttl / 3)

    async def acquire(self, channel_id: str) -> bool:
        """Takes the agent's lock on `channel_id`: False while another replica holds it."""
        request = {"channel_id": channel_id, "holder": self.holder, "ttl_ms": round(self.ttl * 1000)}
        return bool((await self._call("acquireTurnLock", request))["acquired"])

    async def renew(self, channel_id: str) -> bool:
        """Keeps a held lock alive: True when renewed, False when it is lost (it lapsed or another replica took it)."""
        result = await self._call("renewTurnLock", {"channel_id": channel_id, "holder": self.holder})
        return bool(result["renewed"])

    async def release(self, channel_id: str) -> None:
        """Gives the lock up, unless it already lapsed and another replica holds it now."""
        await self._call("releaseTurnLock", {"channel_id": channel_id, "holder": self.holder})

    async def _call(self, op: str, request: dict[str, Any]) -> dict[str, Any]:
        return await self._hub.call(op, request, self._agent_id, timeout=self._attempt_timeout)


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
