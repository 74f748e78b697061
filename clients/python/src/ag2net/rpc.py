"""Request/reply to the hub with the TypeScript client's retry rules.

When no hub answers (no responders: a failover is in progress), the hub answers `unavailable`, or an attempt of an
*idempotent* operation times out, the same request is sent again (backoff 50 ms doubling to 1 s) until `retry_for`
runs out. A non-idempotent operation that timed out, or was answered `unavailable` with `details.reason`
`may_have_applied`, is not resent: it may have been applied. Every other hub error is final and raised at once.
Posts carry a client-minted envelope id and channel creation a client-minted channel id, so a resent one is admitted
once. A request NATS refuses (a permissions violation: the connection's credentials do not allow the operation's
subject) is raised as `AccessDeniedError` naming the operation and the subject, and not resent.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass
from typing import Any, Protocol

import nats.errors

from .errors import AccessDeniedError, HubError, HubUnavailableError, InternalError, error_from_wire, may_resend

#: Default time of one attempt of every operation but `post`, in seconds (the TypeScript client's
#: `DEFAULT_RPC_TIMEOUT_MS`): a read may scan a long log, and what is not idempotent is not resent after a timeout.
DEFAULT_RPC_TIMEOUT = 10.0
#: Default time of one attempt of a `post`, in seconds (`DEFAULT_POST_RPC_TIMEOUT_MS`): a post that reached a hub which
#: then died is resent to its successor after this long (its id admits it once).
DEFAULT_POST_RPC_TIMEOUT = 3.0
#: Default time to keep retrying when no hub answers, in seconds.
DEFAULT_RETRY_FOR = 30.0
DEFAULT_PREFIX = "ag2"
_PREFIX_RE = re.compile(r"^[A-Za-z0-9_-]{1,32}$")
#: How nats-server words a refused publish; nats-py keeps it, lower-cased and as `nats: …`, as the connection's
#: `last_error` (so the subject is compared lower-cased too).
_REFUSED_PUBLISH_RE = re.compile(r'permissions violation for publish to "([^"]+)"', re.IGNORECASE)
#: How often a pending request looks whether NATS refused it, in seconds: nats-py reports a refusal only to the
#: connection's error callback and `last_error`, never to the request, which would otherwise wait out its timeout.
_REFUSAL_POLL = 0.05


class Reply(Protocol):
    @property
    def data(self) -> bytes: ...


class Requester(Protocol):
    """What `HubRpc` needs of a NATS connection (a `nats.aio.client.Client`)."""

    async def request(self, subject: str, payload: bytes = b"", timeout: float = 0.5) -> Reply: ...


@dataclass(frozen=True)
class OpSpec:
    """Whether the op's subject carries the caller's id, and whether a timed-out attempt may be resent."""

    caller: bool
    idempotent: bool


#: Every hub operation, as `HUB_OPS` in @ag2net/protocol declares it.
HUB_OPS: dict[str, OpSpec] = {
    "register": OpSpec(caller=False, idempotent=True),
    "attach": OpSpec(caller=False, idempotent=True),
    "renewCredentials": OpSpec(caller=True, idempotent=True),
    "unregister": OpSpec(caller=True, idempotent=False),
    "revokeIdentity": OpSpec(caller=True, idempotent=True),
    "readmitIdentity": OpSpec(caller=True, idempotent=True),
    "getAgent": OpSpec(caller=False, idempotent=True),
    "getResume": OpSpec(caller=False, idempotent=True),
    "getSkill": OpSpec(caller=False, idempotent=True),
    "getRule": OpSpec(caller=False, idempotent=True),
    "findAgentId": OpSpec(caller=False, idempotent=True),
    "listAgents": OpSpec(caller=False, idempotent=True),
    "setResume": OpSpec(caller=True, idempotent=False),
    "setSkill": OpSpec(caller=True, idempotent=True),
    "setRule": OpSpec(caller=True, idempotent=False),
    "recordObservation": OpSpec(caller=True, idempotent=False),
    "createChannel": OpSpec(caller=True, idempotent=True),
    "getChannel": OpSpec(caller=True, idempotent=True),
    "listChannels": OpSpec(caller=True, idempotent=True),
    "closeChannel": OpSpec(caller=True, idempotent=True),
    "post": OpSpec(caller=True, idempotent=True),
    "readWal": OpSpec(caller=True, idempotent=True),
    "findEnvelopeByCausation": OpSpec(caller=True, idempotent=True),
    "canSend": OpSpec(caller=True, idempotent=True),
    "pendingTurnsFor": OpSpec(caller=True, idempotent=True),
    "adapterState": OpSpec(caller=True, idempotent=True),
    "deliveryLag": OpSpec(caller=True, idempotent=True),
    "health": OpSpec(caller=False, idempotent=True),
    "observeTask": OpSpec(caller=True, idempotent=True),
    "updateTask": OpSpec(caller=True, idempotent=True),
    "getTask": OpSpec(caller=True, idempotent=True),
    "listTasks": OpSpec(caller=True, idempotent=True),
    "checkpointTask": OpSpec(caller=True, idempotent=True),
    "readTaskCheckpoint": OpSpec(caller=True, idempotent=True),
    "fireTaskEvent": OpSpec(caller=True, idempotent=False),
    "reportTurnFailure": OpSpec(caller=True, idempotent=False),
    "acquireTurnLock": OpSpec(caller=True, idempotent=True),
    "renewTurnLock": OpSpec(caller=True, idempotent=True),
    "releaseTurnLock": OpSpec(caller=True, idempotent=True),
    "readAudit": OpSpec(caller=True, idempotent=True),
}


@dataclass(frozen=True)
class HubNames:
    """Subjects and resource names of the hub with `prefix`."""

    prefix: str

    def rpc(self, op: str, caller_id: str | None = None) -> str:
        base = f"{self.prefix}.hub.v1.{op}"
        return base if caller_id is None else f"{base}.{caller_id}"

    @property
    def inbox_stream(self) -> str:
        return f"{self.prefix.upper()}_INBOX"

    def inbox_consumer(self, agent_id: str) -> str:
        return f"agent_{agent_id}"


def default_attempt_timeout(op: str) -> float:
    """How long one attempt of `op` waits by default, in seconds: 3 s for a post, else 10 s."""
    if op not in HUB_OPS:
        raise ValueError(f"unknown hub operation {op!r}")
    return DEFAULT_POST_RPC_TIMEOUT if op == "post" else DEFAULT_RPC_TIMEOUT


def hub_names(prefix: str = DEFAULT_PREFIX) -> HubNames:
    if not _PREFIX_RE.match(prefix):
        raise ValueError('prefix may hold only letters, digits, "_" and "-" (at most 32)')
    return HubNames(prefix)


class HubRpc:
    """Typed-by-code request/reply: a hub error is raised as its `HubError` subclass."""

    def __init__(self, nc: Requester, prefix: str = DEFAULT_PREFIX, retry_for: float = DEFAULT_RETRY_FOR) -> None:
        self.nc = nc
        self.names = hub_names(prefix)
        self.retry_for = retry_for

    async def call(
        self,
        op: str,
        request: dict[str, Any],
        caller_id: str | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """Calls `op` (as `caller_id` when its subject carries the caller) and returns the `result` object."""
        spec = HUB_OPS.get(op)
        if spec is None:
            raise ValueError(f"unknown hub operation {op!r}")
        if spec.caller and caller_id is None:
            raise ValueError(f"{op} needs the caller's agent id")
        subject = self.names.rpc(op, caller_id if spec.caller else None)
        payload = json.dumps(request).encode()
        deadline = time.monotonic() + self.retry_for
        denied = f"this connection may not call {op} (NATS refused {subject})"
        attempt = 0
        while True:
            refused_before = getattr(self.nc, "last_error", None)
            try:
                msg = await self._attempt(subject, payload, timeout or default_attempt_timeout(op), denied)
                return decode_reply(op, msg.data)
            except AccessDeniedError:
                raise
            except Exception as err:
                # A refusal reported in the moment between the last look and the attempt's timeout.
                if _refusal(self.nc, subject, refused_before) is not None:
                    raise AccessDeniedError(denied) from err
                if not is_retryable(err, spec.idempotent):
                    raise
                if time.monotonic() >= deadline:
                    raise HubUnavailableError(f"no hub answered {op} within {self.retry_for} s") from err
            await asyncio.sleep(min(0.05 * 2**attempt, 1.0))
            attempt += 1

    async def _attempt(self, subject: str, payload: bytes, timeout: float, denied: str) -> Reply:
        """One attempt; `AccessDeniedError(denied)` as soon as the connection reports that NATS refused to publish it
        (a refusal reported before the attempt, of an earlier one, does not count)."""
        refused_before = getattr(self.nc, "last_error", None)
        pending = asyncio.ensure_future(self.nc.request(subject, payload, timeout=timeout))
        try:
            while True:
                done, _ = await asyncio.wait({pending}, timeout=_REFUSAL_POLL)
                if done:
                    return pending.result()
                refusal = _refusal(self.nc, subject, refused_before)
                if refusal is not None:
                    raise AccessDeniedError(denied) from refusal
        finally:
            if not pending.done():
                pending.cancel()


def _refusal(nc: object, subject: str, before: object) -> BaseException | None:
    """The connection's error saying that NATS refused to publish on `subject`, if it came after `before`."""
    last = getattr(nc, "last_error", None)
    if last is None or last is before or not isinstance(last, BaseException):
        return None
    match = _REFUSED_PUBLISH_RE.search(str(last))
    return last if match is not None and match.group(1).lower() == subject.lower() else None


def is_retryable(err: BaseException, idempotent: bool) -> bool:
    """No responders and `unavailable` always, but for an `unavailable` that may have taken effect, which is resent only
    for an idempotent op, as a timeout is (it may have been applied). Every other wire error is final."""
    if isinstance(err, HubError):
        return may_resend(err, idempotent)
    if isinstance(err, nats.errors.NoRespondersError):
        return True
    if isinstance(err, (nats.errors.TimeoutError, asyncio.TimeoutError)):
        return idempotent
    return False


def decode_reply(op: str, data: bytes) -> dict[str, Any]:
    """The `result` of an ok reply; the typed error of an error reply; `InternalError` for anything malformed."""
    try:
        reply = json.loads(data)
    except ValueError as err:
        raise InternalError(f"hub sent a reply to {op} that is not JSON") from err
    if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
        raise InternalError(f"hub sent a malformed reply to {op}")
    if reply["ok"] is False:
        raise error_from_wire(reply.get("error"))
    result = reply.get("result")
    if not isinstance(result, dict):
        raise InternalError(f"hub sent an invalid {op} result")
    return result
