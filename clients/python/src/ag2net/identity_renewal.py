"""An identity's own connection kept authenticated: its credentials renewed before they expire."""

from __future__ import annotations

import asyncio
from datetime import datetime

from nats.aio.client import Client as NatsClient

from .connection import CredentialSource
from .credentials import UserCredentials
from .identity import IdentityCredentials
from .renewal import run_renewal
from .turn_locks import HubCaller


def keep_renewed(
    hub: HubCaller, nc: NatsClient, source: CredentialSource, credentials: IdentityCredentials, *, who: str
) -> asyncio.Task[None]:
    """Renews the identity's credentials over `hub` (bound to it, on `nc`) before they expire, for as long as the
    returned task runs: each renewal replaces the JWT `source` presents, persists it and reconnects `nc`."""

    async def renew() -> float:
        fresh = (await hub.call("renewCredentials", {}))["credentials"]
        renewed = UserCredentials(jwt=str(fresh["jwt"]), seed=credentials.user.seed)
        source.update(renewed)
        credentials.persist(renewed)
        # nats-py closes a connection for good when the server reports its JWT expired (it reconnects only after
        # network errors), so the connection reconnects now and presents the renewed JWT before the old one lapses.
        await nc.force_reconnect()
        return datetime.fromisoformat(str(fresh["expires_at"])).timestamp()

    return asyncio.create_task(run_renewal(credentials.lifetime, renew, who=who))
