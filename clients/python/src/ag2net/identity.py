"""An identity's issued credentials: from a `register` or `attach` reply, persisted as `.creds`, reused by attach."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from .credentials import (
    UserCredentials,
    agent_id_of,
    decode_user_claims,
    inbox_prefix_of,
    read_creds_file,
    write_creds_file,
)
from .errors import Ag2netError, ProtocolError
from .models import Passport
from .renewal import CredentialLifetime

log = logging.getLogger("ag2net")

#: The `details.reason` of a `register` refused because another identity holds the name.
_NAME_TAKEN = "name_taken"
#: Persisted credentials that expire sooner than this are treated as expired (fresh ones are asked for), in seconds.
EXPIRY_MARGIN = 5.0
#: How long `attach` looks for the credentials another replica is persisting after it won the registration, in s.
_RACED_WAIT = 3.0
_RACED_POLL = 0.1


class IdentityCredentialsError(Ag2netError):
    """The identity's credentials cannot be used (they belong to another identity, or are missing). Code
    `auth_failed`. Local."""

    code = "auth_failed"


class _Issued(BaseModel):
    """Credentials the hub issued (`IssuedCredentialsSchema`)."""

    model_config = ConfigDict(extra="forbid")
    jwt: str
    expires_at: str
    inbox_prefix: str


class IdentityReply(BaseModel):
    """What `register` and `attach` answer: the stamped passport and, from a hub that issues them, credentials."""

    passport: Passport
    credentials: _Issued | None = None


@dataclass(frozen=True)
class IdentityCredentials:
    """An identity's NATS credentials as its connection uses them."""

    user: UserCredentials
    #: The reply-inbox prefix its connection must use.
    inbox_prefix: str
    lifetime: CredentialLifetime
    #: Where they are persisted, or None.
    creds_path: Path | None

    def persist(self, user: UserCredentials) -> None:
        """Persists renewed credentials at `creds_path` (nothing without one); a failure is logged, not raised."""
        if self.creds_path is None:
            return
        try:
            write_creds_file(self.creds_path, user)
        except OSError as err:
            log.error("persisting renewed credentials at %s failed: %s", self.creds_path, err)


@dataclass(frozen=True)
class IdentityGrant:
    """A registered identity: its stamped passport and, from a hub that issues them, its credentials."""

    passport: Passport
    credentials: IdentityCredentials | None


def issued_identity(result: dict[str, Any], *, seed: str, creds_path: str | Path | None) -> IdentityGrant:
    """The identity a `register` or `attach` result grants, with `seed` (the key the request named). Issued
    credentials are persisted at `creds_path` (0600) before they are used, so that a crash right after registering
    still leaves the identity attachable."""
    reply = IdentityReply.model_validate(result)
    if reply.credentials is None:
        return IdentityGrant(reply.passport, None)
    user = UserCredentials(jwt=reply.credentials.jwt, seed=seed)
    path = Path(creds_path) if creds_path is not None else None
    if path is not None:
        write_creds_file(path, user)
    expires_at = datetime.fromisoformat(reply.credentials.expires_at).timestamp()
    return IdentityGrant(
        reply.passport,
        IdentityCredentials(
            user=user,
            inbox_prefix=reply.credentials.inbox_prefix,
            lifetime=lifetime_of(user.jwt, expires_at),
            creds_path=path,
        ),
    )


def usable_credentials(user: UserCredentials, creds_path: str | Path) -> tuple[str, IdentityCredentials] | None:
    """Persisted credentials that can still connect, with the agent id their JWT names; `None` when they expired (or
    are about to), so that fresh ones must be asked for with the `attach` operation."""
    agent_id = agent_id_of(user.jwt)
    if agent_id is None:
        raise IdentityCredentialsError(f"{creds_path} holds no identity's credentials")
    exp = decode_user_claims(user.jwt).exp
    expires_at = math.inf if exp is None else exp
    if expires_at - time.time() <= EXPIRY_MARGIN:
        return None
    return agent_id, IdentityCredentials(
        user=user,
        inbox_prefix=inbox_prefix_of(user.jwt),
        lifetime=lifetime_of(user.jwt, expires_at),
        creds_path=Path(creds_path),
    )


async def wait_for_persisted(path: str | Path, raced: bool) -> UserCredentials | None:
    """The credentials persisted at `path`; `None` when there are none. After losing a registration race (`raced`),
    waits a little for the winner, another replica of the same identity, to persist them."""
    deadline = time.monotonic() + (_RACED_WAIT if raced else 0.0)
    while True:
        found = read_creds_file(path)
        if found is not None or time.monotonic() >= deadline:
            return found
        await asyncio.sleep(_RACED_POLL)


def lifetime_of(jwt: str, expires_at: float) -> CredentialLifetime:
    """A JWT's lifetime: from its `iat` (or now) to `expires_at`; a JWT without expiry is never renewed."""
    iat = decode_user_claims(jwt).iat
    return CredentialLifetime(issued_at=time.time() if iat is None else iat, expires_at=expires_at)


def registration_extras(
    resume: dict[str, Any] | None, skill_md: str | None, rule: dict[str, Any] | None
) -> dict[str, Any]:
    """The optional fields of a `register` request beside the passport: those given."""
    extra: dict[str, Any] = {}
    if resume is not None:
        extra["resume"] = resume
    if skill_md is not None:
        extra["skill_md"] = skill_md
    if rule is not None:
        extra["rule"] = rule
    return extra


def is_name_taken(err: ProtocolError) -> bool:
    """Whether a `register` was refused because another identity holds the name."""
    reason = err.details.get("reason") if err.details is not None else None
    return reason == _NAME_TAKEN or "already registered" in err.message
