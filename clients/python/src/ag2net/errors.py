"""Errors: the hub's typed wire errors by stable code (unknown codes kept), and the client's local errors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: Codes a client may retry with the same request: the hub did nothing with it (`RETRYABLE_ERROR_CODES`).
RETRYABLE_ERROR_CODES: tuple[str, ...] = ("unavailable",)
#: `details.reason` of an `unavailable` whose operation may have taken effect (`ErrorReason.MayHaveApplied`): the
#: request is resent only when its operation is idempotent.
MAY_HAVE_APPLIED = "may_have_applied"


class NetworkError(Exception):
    """Base of every error that crosses the wire. Switch on `code`, never on the message."""

    code: str = "internal"

    def __init__(self, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] | None = dict(details) if details is not None else None

    def to_wire(self) -> dict[str, Any]:
        """The error as an RPC response carries it."""
        wire: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            wire["details"] = dict(self.details)
        return wire


class NotFoundError(NetworkError):
    """An agent, channel, task or adapter does not exist."""

    code = "not_found"


class AccessDeniedError(NetworkError):
    """A rule or the arbiter denied it."""

    code = "access_denied"


class AuthError(NetworkError):
    """Unknown scheme, missing or wrong credentials."""

    code = "auth_failed"


class ProtocolError(NetworkError):
    """The channel protocol forbids it (turn, state, manifest, knobs)."""

    code = "protocol_error"


class InboxFullError(NetworkError):
    """A recipient's inbox is at capacity."""

    code = "inbox_full"


class InvalidRequestError(NetworkError):
    """The request failed schema validation."""

    code = "invalid_request"


class InternalError(NetworkError):
    """The server failed; not the caller's fault."""

    code = "internal"


class ConflictError(NetworkError):
    """Another write got there first (an envelope id already used in the channel by someone else)."""

    code = "conflict"


class UnavailableError(NetworkError):
    """The hub could not serve the request now and did nothing with it; the client retries it."""

    code = "unavailable"


class UnknownNetworkError(NetworkError):
    """A wire error whose code this version does not know: the code is kept as received."""

    def __init__(self, code: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, details)
        self.code = code


ERROR_CLASSES: Mapping[str, type[NetworkError]] = {
    cls.code: cls
    for cls in (
        NotFoundError,
        AccessDeniedError,
        AuthError,
        ProtocolError,
        InboxFullError,
        InvalidRequestError,
        InternalError,
        ConflictError,
        UnavailableError,
    )
}


class _WireError(BaseModel):
    model_config: ClassVar[ConfigDict] = ConfigDict(extra="allow")
    code: str = Field(min_length=1, max_length=64)
    message: str
    details: dict[str, Any] | None = None


def error_from_wire(wire: object) -> NetworkError:
    """Rebuilds the typed error from its wire form; anything that is not a wire error becomes an `InternalError`."""
    try:
        parsed = _WireError.model_validate(wire)
    except ValidationError:
        return InternalError("malformed error response")
    cls = ERROR_CLASSES.get(parsed.code)
    if cls is None:
        return UnknownNetworkError(parsed.code, parsed.message, parsed.details)
    return cls(parsed.message, parsed.details)


def may_resend(err: NetworkError, idempotent: bool) -> bool:
    """Whether the same request may be sent again after the hub answered `err`: its code is retryable (`unavailable`:
    the hub did nothing with it), unless it may have been applied (`details.reason` `may_have_applied`) and the
    operation is not idempotent. Every other wire error is final: sending it again gets the same answer."""
    if err.code not in RETRYABLE_ERROR_CODES:
        return False
    return idempotent or (err.details or {}).get("reason") != MAY_HAVE_APPLIED


def is_final_error(err: BaseException) -> bool:
    """A wire error the client would not resend for an operation that is not idempotent (a turn is not): every code
    but `unavailable` (`protocol_error` for a closed channel or a turn out of order, `not_found`, `access_denied`,
    `auth_failed`, `invalid_request`, `conflict`, `inbox_full`, `internal`, codes of a newer hub), and an
    `unavailable` that may have been applied. An agent does not retry a turn whose handler raised one. Local errors
    (timeouts, `HubUnavailableError`, a handler's own exceptions) are not final."""
    return isinstance(err, NetworkError) and not may_resend(err, idempotent=False)


class HubUnavailableError(Exception):
    """No hub answered within the client's retry time (no responders, `unavailable` or timeouts). Local."""


class EnvelopeTimeoutError(TimeoutError):
    """No matching delivery arrived in time. Local."""


class DisconnectedError(Exception):
    """The participant was disconnected. Local."""


class TurnLockLostError(Exception):
    """The turn lock was lost while the turn ran; the turn is cancelled. Local."""


class PassportError(ValueError):
    """A passport given to `register` or `attach` has a field the passport does not have, lacks `name`, or has a value
    of the wrong type; the message names the field and the valid ones. Local: nothing was sent."""
