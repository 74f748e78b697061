"""Request/reply to the hub with the TypeScript client's retry rules.

When no hub answers (no responders: a failover is in progress), the hub answers `unavailable`, or an attempt of an
*idempotent* operation times out, the same request is sent again (backoff 50 ms doubling to 1 s) until `retry_for`
runs out. A non-idempotent operation that timed out, or was answered `unavailable` with `details.reason`
`may_have_applied`, is not resent: it may have been applied. Every other hub error is final and raised at once.
Posts carry a client-minted envelope id and channel creation a client-minted channel id, so a resent one is admitted
once. A request NATS refuses (a permissions violation: the connection's credentials do not allow the operation's
subject) is raised as `AccessDeniedError` naming the operation and the subject, and not resent.

Partitions (`ag2net.partitions`): an operation about one channel goes to its channel's partition
(`<prefix>.hub.v1.<op>.<k>.<caller_id>`), an operation every partition answers for its own channels names the
partition it asks, and every other operation goes to the home partition on its usual subject. The partition count is
learnt once from `health` (unless given), and forgotten when that fails so that the next call asks again. With one
partition every subject is `<prefix>.hub.v1.<op>[.<caller_id>]`.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass
from typing import Any, Protocol

import nats.errors
from pydantic import ValidationError

from .errors import AccessDeniedError, HubError, HubUnavailableError, InternalError, error_from_wire, may_resend
from .op_results import Health
from .partitions import check_partitions, partition_of, route_of

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
REFUSAL_POLL = 0.05


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
    """Subjects and resource names of the hub with `prefix`, whose channels are spread over `partitions` partitions."""

    prefix: str
    partitions: int = 1

    def partition_of(self, channel_id: str) -> int:
        """The partition of a channel: `partition_of(channel_id, partitions)`."""
        return partition_of(channel_id, self.partitions)

    def rpc(self, op: str, caller_id: str | None = None) -> str:
        """`<prefix>.hub.v1.<op>` or, for operations with a caller, `<prefix>.hub.v1.<op>.<caller_id>`: the home
        partition's operations, and every operation of a deployment with one partition."""
        base = f"{self.prefix}.hub.v1.{op}"
        return base if caller_id is None else f"{base}.{caller_id}"

    def rpc_in(self, op: str, partition: int, caller_id: str) -> str:
        """`<prefix>.hub.v1.<op>.<partition>.<caller_id>`: an operation about the channels of one partition, sent to
        that partition's owner. With one partition, the same as `rpc(op, caller_id)`."""
        if isinstance(partition, bool) or not isinstance(partition, int) or not 0 <= partition < self.partitions:
            raise ValueError(f"partition must be an integer from 0 to {self.partitions - 1}, not {partition!r}")
        return self.rpc(op, caller_id) if self.partitions == 1 else f"{self.prefix}.hub.v1.{op}.{partition}.{caller_id}"

    @property
    def hubs_ping(self) -> str:
        """`<prefix>.hubs.v1.ping`: the hub roster, a request every hub of the prefix answers with its `health`."""
        return f"{self.prefix}.hubs.v1.ping"

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


def hub_names(prefix: str = DEFAULT_PREFIX, partitions: int = 1) -> HubNames:
    """The names of the hub with `prefix`, whose channels are spread over `partitions` partitions (default 1)."""
    if not _PREFIX_RE.match(prefix):
        raise ValueError('prefix may hold only letters, digits, "_" and "-" (at most 32)')
    return HubNames(prefix, check_partitions(partitions))


class HubRpc:
    """Typed-by-code request/reply: a hub error is raised as its `HubError` subclass. `partitions`: the deployment's
    partition count when known up front (an integer from 1 to `MAX_PARTITIONS`, else `ValueError`); otherwise it is
    asked of the hub (`health`) by the first call of an operation about channels."""

    def __init__(
        self,
        nc: Requester,
        prefix: str = DEFAULT_PREFIX,
        retry_for: float = DEFAULT_RETRY_FOR,
        partitions: int | None = None,
    ) -> None:
        self.nc = nc
        #: The names of the hub's prefix with one partition: the home partition's subjects (`names.rpc`) and the
        #: inboxes. The subjects of a partitioned deployment's channel operations are computed by `call`.
        self.names = hub_names(prefix)
        self.retry_for = retry_for
        self._routed: HubNames | None = None if partitions is None else hub_names(prefix, partitions)
        self._asking: asyncio.Task[HubNames] | None = None

    @property
    def known_partitions(self) -> int | None:
        """The deployment's partition count when known (given, or learnt from `health`); None before."""
        return None if self._routed is None else self._routed.partitions

    async def partitions(self, timeout: float | None = None) -> int:
        """How many partitions the deployment spreads its channels over: given up front, else `Health.partitions` of
        the hub's `health`, asked once (by this or the first call of an operation about channels) and kept. An ask
        that failed is not kept: the next call asks again."""
        return (await self._routed_names(timeout, time.monotonic() + self.retry_for)).partitions

    async def _routed_names(self, timeout: float | None, deadline: float) -> HubNames:
        """The deployment's names, asking the hub (each attempt waiting at most `timeout`, until `deadline`) when no
        call asked yet or the last ask failed. Concurrent calls wait for one ask; when another call's ask fails (maybe
        for that call's own reasons: its time), this one asks again within its own."""
        failed: asyncio.Task[HubNames] | None = None
        while True:
            if self._routed is not None:
                return self._routed
            ask = self._asking
            own = ask is None or ask is failed
            if ask is None or ask is failed:
                ask = asyncio.ensure_future(self._ask_partitions(timeout, deadline))
                ask.add_done_callback(self._asked)
                self._asking = ask
            try:
                # Shielded: a call that is cancelled does not cancel the ask other calls wait for.
                return await asyncio.shield(ask)
            except asyncio.CancelledError:
                if own or not ask.cancelled():
                    raise
                failed = ask
            except Exception:
                if own:
                    raise
                failed = ask

    async def _ask_partitions(self, timeout: float | None, deadline: float) -> HubNames:
        """Asks the hub's `health` for the partition count, within what the asking call has left."""
        attempt = default_attempt_timeout("health")
        result = await self.call(
            "health",
            {},
            timeout=attempt if timeout is None else min(timeout, attempt),
            retry_for=max(0.0, deadline - time.monotonic()),
        )
        try:
            partitions = Health.model_validate(result).partitions
        except ValidationError as err:
            raise InternalError("hub sent an invalid health result") from err
        return hub_names(self.names.prefix, partitions)

    def _asked(self, ask: asyncio.Task[HubNames]) -> None:
        """Keeps the count an ask learnt; forgets a failed ask, so that the next call asks again."""
        if self._asking is ask:
            self._asking = None
        if not ask.cancelled() and ask.exception() is None and self._routed is None:
            self._routed = ask.result()

    async def subject_of(
        self,
        op: str,
        request: dict[str, Any],
        caller_id: str | None = None,
        partition: int | None = None,
        *,
        timeout: float | None = None,
        deadline: float | None = None,
    ) -> str:
        """The subject a request of `op` goes to: an operation about one channel to the channel's partition (from the
        request's `channel_id`), an operation each partition answers for its own channels to `partition` (default 0
        with one partition, required with more), any other to the home partition's subject. The first call of an
        operation about channels asks the hub for the partition count first, until `deadline` (`time.monotonic()`;
        default `retry_for` from now). `partition` is ignored by every operation but the scattered ones."""
        spec = HUB_OPS.get(op)
        if spec is None:
            raise ValueError(f"unknown hub operation {op!r}")
        if spec.caller and caller_id is None:
            raise ValueError(f"{op} needs the caller's agent id")
        route = route_of(op)
        if route == "home":
            return self.names.rpc(op, caller_id if spec.caller else None)
        if caller_id is None:  # every operation routed by partition carries its caller
            raise ValueError(f"{op} needs the caller's agent id")
        try:
            names = await self._routed_names(
                timeout, time.monotonic() + self.retry_for if deadline is None else deadline
            )
        except HubUnavailableError as err:
            raise HubUnavailableError(
                f"no hub answered {op}: its health request, for the deployment's partition count, went unanswered"
            ) from err
        if route == "channel":
            channel_id = request.get("channel_id")
            if isinstance(channel_id, str):
                return names.rpc_in(op, names.partition_of(channel_id), caller_id)
            if names.partitions == 1:
                return names.rpc(op, caller_id)
            raise ValueError(
                f"{op} needs a channel_id in a deployment of {names.partitions} partitions: the channel's partition is "
                "computed from it"
            )
        if partition is None:
            if names.partitions == 1:
                return names.rpc(op, caller_id)
            raise ValueError(
                f"{op} is answered by each of the deployment's {names.partitions} partitions for its own channels: "
                f"partition must name one, from 0 to {names.partitions - 1}"
            )
        return names.rpc_in(op, partition, caller_id)

    async def call(
        self,
        op: str,
        request: dict[str, Any],
        caller_id: str | None = None,
        timeout: float | None = None,
        *,
        partition: int | None = None,
        retry_for: float | None = None,
    ) -> dict[str, Any]:
        """Calls `op` (as `caller_id` when its subject carries the caller) and returns the `result` object, retrying
        for `retry_for` seconds (default: this client's). The request goes where its operation is served
        (`subject_of`): `partition` names the partition asked by `listChannels`, `pendingTurnsFor` and `deliveryLag`,
        required when the deployment has more than one."""
        retry_for = self.retry_for if retry_for is None else retry_for
        # Asking the partition count is part of the call: it counts against its time.
        deadline = time.monotonic() + retry_for
        subject = await self.subject_of(op, request, caller_id, partition, timeout=timeout, deadline=deadline)
        spec = HUB_OPS[op]
        payload = json.dumps(request).encode()
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
                if refused_publish(self.nc, subject, refused_before) is not None:
                    raise AccessDeniedError(denied) from err
                if not is_retryable(err, spec.idempotent):
                    raise
                if time.monotonic() >= deadline:
                    raise HubUnavailableError(f"no hub answered {op} within {retry_for} s") from err
            await asyncio.sleep(min(0.05 * 2**attempt, 1.0))
            attempt += 1

    async def _attempt(self, subject: str, payload: bytes, timeout: float, denied: str) -> Reply:
        """One attempt; `AccessDeniedError(denied)` as soon as the connection reports that NATS refused to publish it
        (a refusal reported before the attempt, of an earlier one, does not count)."""
        refused_before = getattr(self.nc, "last_error", None)
        pending = asyncio.ensure_future(self.nc.request(subject, payload, timeout=timeout))
        try:
            while True:
                done, _ = await asyncio.wait({pending}, timeout=REFUSAL_POLL)
                if done:
                    return pending.result()
                refusal = refused_publish(self.nc, subject, refused_before)
                if refusal is not None:
                    raise AccessDeniedError(denied) from refusal
        finally:
            if not pending.done():
                pending.cancel()


def refused_publish(nc: object, subject: str, before: object) -> BaseException | None:
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
