"""NATS connections of a hub client: without credentials, or authenticated with replaceable user credentials."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlunparse

import nats
import nats.errors
from nats.aio.client import Client as NatsClient
from nats.aio.client import RawCredentials

from .credentials import DEFAULT_INBOX_PREFIX, UserCredentials, format_creds, inbox_prefix_of, load_creds


class CredentialSource:
    """The credentials a connection authenticates with, replaceable while it lives: the connection reads them each
    time it (re)connects, so renewed credentials are used from the next reconnect on. The hub client reconnects an
    identity's connection right after each renewal, because nats-server closes a connection whose JWT expired and
    nats-py then closes it for good instead of reconnecting."""

    def __init__(self, credentials: UserCredentials) -> None:
        self.current = credentials

    def update(self, credentials: UserCredentials) -> None:
        """Replaces the JWT (the seed of an identity never changes)."""
        self.current = credentials


class _LiveCreds(RawCredentials):
    """`.creds` text that nats-py reads at every (re)connect (its JWT and signature callbacks parse `data` each time
    they are called): the source's current credentials, so a renewed JWT is what the next CONNECT presents."""

    def __init__(self, source: CredentialSource) -> None:
        self._source = source

    @property
    def data(self) -> str:
        return format_creds(self._source.current)

    @data.setter
    def data(self, _value: str) -> None:
        raise AttributeError("live credentials are replaced through their source")


async def open_connection(
    servers: str | list[str],
    source: CredentialSource | None,
    *,
    inbox_prefix: str | None = None,
    name: str | None = None,
) -> NatsClient:
    """Opens a NATS connection that reconnects for ever, authenticating with the source's current credentials (none
    when `source` is None). The reply-inbox prefix defaults to the one the credentials' JWT allows, else `_INBOX`."""
    if source is None:
        return await nats.connect(
            servers, max_reconnect_attempts=-1, inbox_prefix=inbox_prefix or DEFAULT_INBOX_PREFIX, name=name
        )
    # nats-py retries a first connection the server refuses for ever when reconnects are unlimited: the first one is
    # made without reconnects, so that refused credentials (revoked, or of an account the deployment no longer admits
    # identities to) raise `AuthorizationError` and the hub client can ask for fresh ones; then it reconnects for ever.
    try:
        nc = await nats.connect(
            servers,
            allow_reconnect=False,
            user_credentials=_LiveCreds(source),
            inbox_prefix=inbox_prefix or inbox_prefix_of(source.current.jwt),
            name=name,
        )
    except nats.errors.Error as err:
        # nats-py reports the server's refusal of a first connection as a plain error with the server's text.
        if "authorization violation" in str(err).lower():
            raise nats.errors.AuthorizationError from err
        raise
    nc.options["allow_reconnect"] = True
    nc.options["max_reconnect_attempts"] = -1
    return nc


def server_of(nc: NatsClient) -> str:
    """The URL of the server `nc` is connected to, for opening further connections to the same deployment."""
    url = nc.connected_url
    if url is None:
        raise RuntimeError("the NATS connection is not connected")
    netloc = url.hostname or "127.0.0.1"
    return urlunparse((url.scheme or "nats", f"{netloc}:{url.port or 4222}", "", "", "", ""))


def credentials_of(creds: str | Path | None, jwt: str | None, seed: str | None) -> UserCredentials | None:
    """The credentials `HubClient.connect` was given (`creds`: a `.creds` file's text or path; or `jwt` and `seed`),
    or None."""
    if creds is not None:
        return load_creds(creds)
    if jwt is None and seed is None:
        return None
    if jwt is None or seed is None:
        raise TypeError("HubClient.connect: jwt and seed go together")
    return UserCredentials(jwt=jwt, seed=seed)
