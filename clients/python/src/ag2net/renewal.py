"""Renewal of an identity's credentials before they expire, as the TypeScript client's `runRenewal`."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

log = logging.getLogger("ag2net")

#: The share of a credential's lifetime after which it is renewed: two thirds.
RENEW_AT_FRACTION = 2 / 3
#: The shortest and longest pause between two attempts of a failed renewal, in seconds.
_RETRY_MIN = 0.1
_RETRY_MAX = 5.0


@dataclass(frozen=True)
class CredentialLifetime:
    """When credentials were issued and when they stop being accepted, in seconds since the epoch (`inf`: never)."""

    issued_at: float
    expires_at: float


def renewal_delay(now: float, lifetime: CredentialLifetime) -> float:
    """How long to wait from `now` before renewing credentials of `lifetime`: until 2/3 of it passed, never negative."""
    at = lifetime.issued_at + (lifetime.expires_at - lifetime.issued_at) * RENEW_AT_FRACTION
    return max(0.0, at - now)


async def run_renewal(
    lifetime: CredentialLifetime,
    renew: Callable[[], Awaitable[float]],
    *,
    who: str,
    now: Callable[[], float] = time.time,
) -> None:
    """Renews credentials until cancelled: at 2/3 of each lifetime, so that a renewal that fails has the last third to
    be retried (with backoff) before the connection's JWT expires. `renew` asks the hub for fresh credentials and
    returns their expiry (seconds since the epoch). Returns when the credentials expired while every renewal failed
    (logged as an error: the connection is then refused at its next reconnect). Never raises but `CancelledError`."""
    while math.isfinite(lifetime.expires_at):
        await asyncio.sleep(renewal_delay(now(), lifetime))
        attempt = 0
        while True:
            attempt += 1
            issued_at = now()
            try:
                expires_at = await renew()
            except Exception as err:  # noqa: BLE001 - retried until the credentials expire
                left = lifetime.expires_at - now()
                if left <= 0:
                    log.error("credentials of %s expired; every renewal failed (%d attempts): %s", who, attempt, err)
                    return
                retry_in = min(_RETRY_MAX, max(_RETRY_MIN, left / 4))
                log.warning("credential renewal of %s failed; retrying in %.1f s: %s", who, retry_in, err)
                await asyncio.sleep(retry_in)
                continue
            lifetime = CredentialLifetime(issued_at=issued_at, expires_at=expires_at)
            log.debug("credentials of %s renewed until %s", who, expires_at)
            break
