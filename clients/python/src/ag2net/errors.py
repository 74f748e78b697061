"""Errors: one family (`Ag2netError`) with a stable code from one list, the hub's typed wire errors by code (unknown
codes kept), the client's local errors, and what each code means for retries, HTTP and the command line."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

#: Every code an ag2net error carries, in one closed list (`ERROR_CODES` of `@ag2net/protocol`): the codes the hub
#: answers, the bridge's `rate_limited`, the local ones and the model failures of `ag2.turn.failed`.
#: conformance/fixtures/error-codes.json holds the same table; `tests/test_error_codes.py` checks this one against it.
WIRE_ERROR_CODES: tuple[str, ...] = (
    "not_found",
    "access_denied",
    "auth_failed",
    "protocol_error",
    "inbox_full",
    "invalid_request",
    "internal",
    "conflict",
    "unavailable",
)


class ExitCode(IntEnum):
    """The exit codes of the `ag2net` command, stable for scripts (`ExitCode` of `@ag2net/protocol`)."""

    OK = 0
    ERROR = 1
    USAGE = 2
    NOT_FOUND = 3
    ACCESS_DENIED = 4
    UNAVAILABLE = 5


@dataclass(frozen=True)
class ErrorCodeInfo:
    """What one code means: its scope (`wire`, `http`, `local`, `model`), whether a later call may succeed, the HTTP
    status the bridge answers it with and the exit code of a command that failed with it."""

    scope: str
    retryable: bool
    http_status: int
    exit_code: ExitCode


def _info(scope: str, retryable: bool, http_status: int, exit_code: ExitCode) -> ErrorCodeInfo:
    return ErrorCodeInfo(scope, retryable, http_status, exit_code)


#: The one table of what each code means, in the order of `ERROR_CODES`; every mapping below reads it.
ERROR_CODE_INFO: Mapping[str, ErrorCodeInfo] = {
    "not_found": _info("wire", False, 404, ExitCode.NOT_FOUND),
    "access_denied": _info("wire", False, 403, ExitCode.ACCESS_DENIED),
    "auth_failed": _info("wire", False, 401, ExitCode.ACCESS_DENIED),
    "protocol_error": _info("wire", False, 422, ExitCode.ERROR),
    "inbox_full": _info("wire", False, 429, ExitCode.ERROR),
    "invalid_request": _info("wire", False, 400, ExitCode.USAGE),
    "internal": _info("wire", False, 500, ExitCode.ERROR),
    "conflict": _info("wire", False, 409, ExitCode.ERROR),
    "unavailable": _info("wire", True, 503, ExitCode.UNAVAILABLE),
    "rate_limited": _info("http", True, 429, ExitCode.ERROR),
    "timeout": _info("local", True, 504, ExitCode.UNAVAILABLE),
    "cancelled": _info("local", False, 499, ExitCode.ERROR),
    "closed": _info("local", False, 503, ExitCode.UNAVAILABLE),
    "invalid_config": _info("local", False, 500, ExitCode.USAGE),
    "model_auth": _info("model", False, 502, ExitCode.ERROR),
    "model_timeout": _info("model", True, 504, ExitCode.ERROR),
    "model_unavailable": _info("model", True, 503, ExitCode.ERROR),
    "model_malformed_output": _info("model", False, 502, ExitCode.ERROR),
    "model_rejected": _info("model", False, 502, ExitCode.ERROR),
    "model_error": _info("model", False, 502, ExitCode.ERROR),
}
ERROR_CODES: tuple[str, ...] = tuple(ERROR_CODE_INFO)
#: How a code this version does not know (a newer hub's) is treated: like `internal`.
UNKNOWN_ERROR_CODE_INFO: ErrorCodeInfo = ERROR_CODE_INFO["internal"]


def is_error_code(code: str) -> bool:
    """Whether `code` is one of `ERROR_CODES`."""
    return code in ERROR_CODE_INFO


def error_code_info(code: str) -> ErrorCodeInfo:
    """What `code` means; a code this version does not know is treated like `internal`."""
    return ERROR_CODE_INFO.get(code, UNKNOWN_ERROR_CODE_INFO)


def is_retryable_code(code: str) -> bool:
    """Whether an error with `code` may succeed if tried again. The one place retryability is decided."""
    return error_code_info(code).retryable


def http_status_of(code: str) -> int:
    """The HTTP status the bridge answers an error with `code` with (500 for a code this version does not know)."""
    return error_code_info(code).http_status


def exit_code_of(code: str) -> ExitCode:
    """The exit code of a command that failed with `code` (1 for a code this version does not know)."""
    return error_code_info(code).exit_code


#: Codes a client may retry with the same request: the hub did nothing with it (`RETRYABLE_ERROR_CODES`).
RETRYABLE_ERROR_CODES: tuple[str, ...] = tuple(c for c in WIRE_ERROR_CODES if is_retryable_code(c))
#: `details.reason` of an `unavailable` whose operation may have taken effect (`ErrorReason.MayHaveApplied`): the
#: request is resent only when its operation is idempotent.
MAY_HAVE_APPLIED = "may_have_applied"


class Ag2netError(Exception):
    """Base of every ag2net error, local or from the wire. `code` is one of `ERROR_CODES` and stable; `retryable`
    follows from it; switch on `code`, never on the message."""

    code: str = "internal"

    def __init__(self, message: str = "", details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, Any] | None = dict(details) if details is not None else None

    @property
    def retryable(self) -> bool:
        """Whether the same call may succeed if made again later; decided by `code` alone."""
        return is_retryable_code(self.code)

    def to_wire(self) -> dict[str, Any]:
        """The error as an RPC response or the bridge carries it."""
        wire: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.details is not None:
            wire["details"] = dict(self.details)
        return wire


class HubError(Ag2netError):
    """Base of the errors the hub answers in RPC error bodies (codes of `WIRE_ERROR_CODES`)."""


#: The former name of `HubError`. Deprecated: use `HubError`, or `Ag2netError` to catch every ag2net error.
NetworkError = HubError


class NotFoundError(HubError):
    """An agent, channel, task or adapter does not exist."""

    code = "not_found"


class AccessDeniedError(HubError):
    """A rule or the arbiter denied it."""

    code = "access_denied"


class AuthError(HubError):
    """Unknown scheme, missing or wrong credentials."""

    code = "auth_failed"


class ProtocolError(HubError):
    """The channel protocol forbids it (turn, state, manifest, knobs)."""

    code = "protocol_error"


class InboxFullError(HubError):
    """A recipient's inbox is at capacity."""

    code = "inbox_full"


class InvalidRequestError(HubError):
    """The request failed schema validation."""

    code = "invalid_request"


class InternalError(HubError):
    """The server failed; not the caller's fault."""

    code = "internal"


class ConflictError(HubError):
    """Another write got there first (an envelope id already used in the channel by someone else)."""

    code = "conflict"


class UnavailableError(HubError):
    """The hub could not serve the request now and did nothing with it; the client retries it."""

    code = "unavailable"


class UnknownHubError(HubError):
    """A wire error whose code this version does not know: the code is kept as received, and treated like
    `internal`."""

    def __init__(self, code: str, message: str, details: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, details)
        self.code = code

    @property
    def retryable(self) -> bool:
        """Never: a code this version does not know is treated like `internal`, even one it knows off the wire."""
        return UNKNOWN_ERROR_CODE_INFO.retryable


#: The former name of `UnknownHubError`. Deprecated: use `UnknownHubError`.
UnknownNetworkError = UnknownHubError


ERROR_CLASSES: Mapping[str, type[HubError]] = {
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


def error_from_wire(wire: object) -> HubError:
    """Rebuilds the typed error from its wire form; anything that is not a wire error becomes an `InternalError`."""
    try:
        parsed = _WireError.model_validate(wire)
    except ValidationError:
        return InternalError("malformed error response")
    cls = ERROR_CLASSES.get(parsed.code)
    if cls is None:
        return UnknownHubError(parsed.code, parsed.message, parsed.details)
    return cls(parsed.message, parsed.details)


def may_resend(err: HubError, idempotent: bool) -> bool:
    """Whether the same request may be sent again after the hub answered `err`: its code is retryable (`unavailable`:
    the hub did nothing with it), unless it may have been applied (`details.reason` `may_have_applied`) and the
    operation is not idempotent. Every other wire error is final: sending it again gets the same answer."""
    if not err.retryable:
        return False
    return idempotent or (err.details or {}).get("reason") != MAY_HAVE_APPLIED


def is_final_error(err: BaseException) -> bool:
    """A wire error the client would not resend for an operation that is not idempotent (a turn is not): every code
    but `unavailable` (`protocol_error` for a closed channel or a turn out of order, `not_found`, `access_denied`,
    `auth_failed`, `invalid_request`, `conflict`, `inbox_full`, `internal`, codes of a newer hub), and an
    `unavailable` that may have been applied. An agent does not retry a turn whose handler raised one. Local errors
    (timeouts, `HubUnavailableError`, a handler's own exceptions) are not final."""
    return isinstance(err, HubError) and not may_resend(err, idempotent=False)


class HubUnavailableError(Ag2netError):
    """No hub answered within the client's retry time (no responders, `unavailable` or timeouts). Code
    `unavailable`. Local."""

    code = "unavailable"


class EnvelopeTimeoutError(Ag2netError, TimeoutError):
    """No matching delivery arrived in time. Code `timeout`. Local."""

    code = "timeout"


class DisconnectedError(Ag2netError):
    """The participant was disconnected. Code `closed`. Local."""

    code = "closed"


class TurnLockLostError(Ag2netError):
    """The turn lock was lost while the turn ran (another replica may hold it); the turn is cancelled. Code
    `conflict`. Local."""

    code = "conflict"


class PassportError(Ag2netError, ValueError):
    """A passport given to `register` or `attach` has a field the passport does not have, lacks `name`, or has a value
    of the wrong type; the message names the field and the valid ones. Code `invalid_request`. Local: nothing was
    sent."""

    code = "invalid_request"
