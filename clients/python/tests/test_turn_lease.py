"""The turn lock heartbeat, as the TypeScript `TurnLease`: renewals keep it, a renewal the hub answers `renewed:
false` loses it at once, and renewals that get no answer lose it one TTL after the last renewal known to have succeeded
was sent."""

from __future__ import annotations

import asyncio
import time

from ag2net.errors import TurnLockLostError
from ag2net.turn_locks import TurnLease


async def lost_reason(renew_results: list[bool | None], ttl: float = 0.3) -> tuple[str, int]:
    """Runs a lease whose renewals answer from `renew_results` (`None`: never answers); returns why it was lost and
    how many renewals were sent."""
    lost: asyncio.Future[TurnLockLostError] = asyncio.get_running_loop().create_future()
    sent = 0

    async def renew() -> bool:
        nonlocal sent
        sent += 1
        result = renew_results.pop(0) if renew_results else None
        if result is None:
            await asyncio.Event().wait()
        return bool(result)

    lease = TurnLease(ttl, renew, time.monotonic(), lambda reason: lost.set_result(reason))
    try:
        reason = await asyncio.wait_for(lost, timeout=10)
    finally:
        lease.stop()
    return str(reason), sent


async def test_a_renewal_answered_lost_loses_the_lock_at_once() -> None:
    assert await lost_reason([True, True, False]) == ("turn lock taken by another replica or lapsed", 3)


async def test_unanswered_renewals_lose_the_lock_after_one_ttl() -> None:
    reason, sent = await lost_reason([True, None])
    assert (reason, sent) == ("turn lock not renewed within 0.3 s", 2)


async def test_a_stopped_lease_reports_nothing() -> None:
    calls: list[TurnLockLostError] = []

    async def renew() -> bool:
        await asyncio.Event().wait()  # never answers: a running lease would be lost after one TTL
        return True

    lease = TurnLease(0.3, renew, time.monotonic(), calls.append)
    await asyncio.sleep(0)
    lease.stop()
    await asyncio.sleep(0.6)  # two TTLs
    assert calls == []
