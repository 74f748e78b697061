"""`HubClient`: one NATS connection to one hub (one prefix); registers and attaches identities.

Every identity runs on a hub client bound to it (`participant.hub`, whose default caller is the identity): on a hub
that issues credentials, over the identity's own NATS connection authenticated with its own nkey (renewed before
expiry); on an unsecured hub, over this client's connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Any, TypeVar

import nats.errors
from nats.aio.client import Client as NatsClient

from .agent import AgentClient, AgentHandler, TurnFailedListener
from .connection import CredentialSource, credentials_of, open_connection, server_of
from .credentials import create_identity_keys, public_key_of
from .errors import ProtocolError
from .hub_reads import HubReads
from .hub_roster import DEFAULT_ROSTER_WINDOW, hub_roster
from .human import HumanClient
from .identity import (
    IdentityCredentials,
    IdentityCredentialsError,
    IdentityGrant,
    is_name_taken,
    issued_identity,
    registration_extras,
    usable_credentials,
    wait_for_persisted,
)
from .identity_renewal import keep_renewed
from .ids import new_id
from .inbox import DEFAULT_DISCONNECT_GRACE
from .models import Passport
from .op_results import DeliveryLag, Health
from .participant import Participant
from .participant_start import ParticipantStart, agent_starter, human_starter
from .passport import check_passport
from .rpc import DEFAULT_PREFIX, DEFAULT_RETRY_FOR, HUB_OPS, HubRpc
from .turn_locks import TURN_LOCK_TTL
from .turn_retries import DEFAULT_MAX_TURN_ATTEMPTS, DEFAULT_TURN_RETRY_BACKOFF

log = logging.getLogger("ag2net")

#: The caller token of the deployment's operator (`OPERATOR_CALLER`): only operator credentials may use it.
OPERATOR_CALLER = "$operator"

_P = TypeVar("_P", bound=Participant)


class HubClient(HubReads):
    """Use `await HubClient.connect(...)`; `async with` closes it."""

    def __init__(
        self,
        nc: NatsClient,
        prefix: str,
        retry_for: float,
        owns_connection: bool,
        *,
        servers: str | list[str] | None = None,
        secured: bool = False,
        default_caller: str | None = None,
        parent: HubClient | None = None,
        partitions: int | None = None,
    ) -> None:
        self.nc = nc
        self.rpc = HubRpc(nc, prefix, retry_for, partitions)
        #: The caller of operations that name one when the call does not: a bound identity, `$operator`, or None.
        self.default_caller = default_caller
        self._prefix = prefix
        self._retry_for = retry_for
        self._owns = owns_connection
        self._servers = servers
        self._secured = secured
        self._parent = parent
        self._participants: set[Participant] = set()
        self._renewal: asyncio.Task[None] | None = None
        self._closing = False
        self._closed = False

    @staticmethod
    async def connect(
        servers: str | list[str] = "nats://127.0.0.1:4222",
        *,
        prefix: str = DEFAULT_PREFIX,
        retry_for: float = DEFAULT_RETRY_FOR,
        connection: NatsClient | None = None,
        creds: str | Path | None = None,
        jwt: str | None = None,
        seed: str | None = None,
        operator: bool = False,
        partitions: int | None = None,
    ) -> HubClient:
        """Connects to NATS (reconnecting forever), or wraps `connection` (which it then does not close). With `creds`
        (the text of a `.creds` file or its path) or `jwt` + `seed` the connection authenticates as that user (the
        registrant's, an operator's or an identity's) and its reply inbox is the one the JWT's subscribe permission
        allows. `operator=True` makes `$operator` the default caller of channel reads. `partitions`: the deployment's
        partition count when known; otherwise the hub is asked (`health`) before the first operation routed by it."""
        default_caller = OPERATOR_CALLER if operator else None
        if connection is not None:
            return HubClient(
                connection,
                prefix,
                retry_for,
                False,
                servers=None,
                secured=False,
                default_caller=default_caller,
                partitions=partitions,
            )
        credentials = credentials_of(creds, jwt, seed)
        source = CredentialSource(credentials) if credentials is not None else None
        nc = await open_connection(servers, source)
        return HubClient(
            nc,
            prefix,
            retry_for,
            True,
            servers=servers,
            secured=credentials is not None,
            default_caller=default_caller,
            partitions=partitions,
        )

    async def call(
        self,
        op: str,
        request: dict[str, Any],
        caller_id: str | None = None,
        timeout: float | None = None,
        *,
        partition: int | None = None,
    ) -> dict[str, Any]:
        """Any hub operation (docs/protocol.md#rpc); returns its `result`. An op whose subject carries the caller is
        made as `default_caller` unless `caller_id` is given. An operation about one channel goes to the channel's
        partition; `listChannels`, `pendingTurnsFor` and `deliveryLag` ask one `partition` (required when the
        deployment has more than one: `list_channels`, `pending_turns` and `delivery_lag` ask them all)."""
        if self._closed:
            raise RuntimeError("HubClient is closed")
        spec = HUB_OPS.get(op)
        caller = caller_id if caller_id is not None else self.default_caller
        return await self.rpc.call(
            op, request, caller if spec is not None and spec.caller else None, timeout, partition=partition
        )

    async def partitions(self) -> int:
        """How many partitions the deployment's channels are spread over: given to `connect`, or asked of the hub
        (`health`) once."""
        return await self.rpc.partitions()

    async def hubs(self, timeout: float = DEFAULT_ROSTER_WINDOW) -> list[Health]:
        """Every hub of the prefix, active or standby, that answers the roster (`<prefix>.hubs.v1.ping`) within
        `timeout` seconds (default 1), each with its `Health`: the active hubs first, then the standbys, each group by
        hub id; an empty list, at once, when no hub is there. `held` of each says which partitions it holds, at which
        epoch (`partition_holders` lists them by partition). Operator connections only: others get
        `AccessDeniedError`. A reply that is not a valid `Health` is dropped with a warning."""
        if self._closed:
            raise RuntimeError("HubClient is closed")
        return await hub_roster(self.nc, self.rpc.names, timeout)

    async def delivery_lag(self) -> DeliveryLag | None:
        """How far the hub's delivery lags behind admission (`None` before it ever provisioned), as `$operator`:
        operator connections only, others get `AccessDeniedError`. With several partitions every partition is asked:
        the pending counts are summed and the oldest age is the oldest of any (`None` when none pends)."""
        count = await self.partitions()
        if count == 1:
            return _lag_of(await self.call("deliveryLag", {}, OPERATOR_CALLER))
        answers = await asyncio.gather(
            *(self.call("deliveryLag", {}, OPERATOR_CALLER, partition=k) for k in range(count))
        )
        lags = [lag for lag in map(_lag_of, answers) if lag is not None]
        if not lags:
            return None
        ages = [lag.oldest_pending_age_seconds for lag in lags if lag.oldest_pending_age_seconds is not None]
        return DeliveryLag(
            pending=sum(lag.pending for lag in lags),
            ack_pending=sum(lag.ack_pending for lag in lags),
            oldest_pending_age_seconds=max(ages) if ages else None,
        )

    async def register(
        self,
        passport: dict[str, Any],
        *,
        handler: AgentHandler | None = None,
        resume: dict[str, Any] | None = None,
        skill_md: str | None = None,
        rule: dict[str, Any] | None = None,
        creds_path: str | Path | None = None,
        exclusive_turns: bool = True,
        turn_lock_ttl: float = TURN_LOCK_TTL,
        max_turn_attempts: int = DEFAULT_MAX_TURN_ATTEMPTS,
        turn_retry_backoff: float = DEFAULT_TURN_RETRY_BACKOFF,
        on_turn_failed: TurnFailedListener | None = None,
    ) -> AgentClient:
        """Registers an agent identity with a fresh nkey pair (its public key goes to the hub, its seed never leaves
        this process; a client-minted `agent_id` makes a retry idempotent) and starts its inbox. On a hub that issues
        credentials the agent runs over its own connection, and they are persisted at `creds_path` (0600) when given.
        A passport field it does not have raises `PassportError` naming the valid ones (README: Passport). `handler`
        and `on_turn_failed` may be `async def`s or plain functions."""
        if passport.get("kind") == "human":
            raise TypeError("register() is for agents; use register_human() for kind='human'")
        grant = await self._register_identity(passport, registration_extras(resume, skill_md, rule), creds_path)
        start = agent_starter(
            handler,
            exclusive_turns=exclusive_turns,
            turn_lock_ttl=turn_lock_ttl,
            max_turn_attempts=max_turn_attempts,
            turn_retry_backoff=turn_retry_backoff,
            on_turn_failed=on_turn_failed,
        )
        return await self._start(grant, start)

    async def register_human(
        self,
        passport: dict[str, Any],
        *,
        auto_ack_invites: bool = True,
        resume: dict[str, Any] | None = None,
        rule: dict[str, Any] | None = None,
        creds_path: str | Path | None = None,
    ) -> HumanClient:
        """Registers a person (kind `human`); invites are accepted automatically unless `auto_ack_invites` is False."""
        if passport.get("kind") not in (None, "human"):
            raise TypeError(f"register_human() requires kind='human'; got {passport.get('kind')!r}")
        grant = await self._register_identity(
            {**passport, "kind": "human"}, registration_extras(resume, None, rule), creds_path
        )
        return await self._start(grant, human_starter(auto_ack_invites))

    async def attach(
        self,
        name: str,
        *,
        passport: dict[str, Any] | None = None,
        handler: AgentHandler | None = None,
        creds_path: str | Path | None = None,
        exclusive_turns: bool = True,
        turn_lock_ttl: float = TURN_LOCK_TTL,
        max_turn_attempts: int = DEFAULT_MAX_TURN_ATTEMPTS,
        turn_retry_backoff: float = DEFAULT_TURN_RETRY_BACKOFF,
        on_turn_failed: TurnFailedListener | None = None,
    ) -> AgentClient:
        """Reconnects to a registered agent by name: its unacked deliveries arrive again. On a secured deployment that
        takes the identity's own credentials (`creds_path`, persisted when it registered; fresh ones are asked for with
        the `attach` operation when they expired). An unknown name is registered with `passport`; when another replica
        registers it first, this attaches to that identity."""
        grant = await self._attach_identity(name, passport, creds_path, human=False, raced=False)
        start = agent_starter(
            handler,
            exclusive_turns=exclusive_turns,
            turn_lock_ttl=turn_lock_ttl,
            max_turn_attempts=max_turn_attempts,
            turn_retry_backoff=turn_retry_backoff,
            on_turn_failed=on_turn_failed,
        )
        return await self._start(grant, start)

    async def attach_human(
        self,
        name: str,
        *,
        passport: dict[str, Any] | None = None,
        creds_path: str | Path | None = None,
        auto_ack_invites: bool = True,
    ) -> HumanClient:
        """Reconnects to a person registered earlier (by name), or registers the name when it is new."""
        grant = await self._attach_identity(name, passport or {}, creds_path, human=True, raced=False)
        if grant[0].kind != "human":
            await grant[1].close()
            raise TypeError(f"attach_human({name!r}): not a human identity")
        return await self._start(grant, human_starter(auto_ack_invites))

    async def _register_identity(
        self, passport: dict[str, Any], extra: dict[str, Any], creds_path: str | Path | None
    ) -> _Grant:
        check_passport(passport)
        keys = create_identity_keys()
        body = {
            "passport": {**passport, "agent_id": passport.get("agent_id") or new_id()},
            **extra,
            "public_key": keys.public_key,
        }
        result = await self.call("register", body)
        return await self._bind(issued_identity(result, seed=keys.seed, creds_path=creds_path))

    async def _attach_identity(
        self,
        name: str,
        passport: dict[str, Any] | None,
        creds_path: str | Path | None,
        *,
        human: bool,
        raced: bool,
    ) -> _Grant:
        if passport is not None:
            check_passport({**passport, "name": name})
        persisted = None if creds_path is None else await wait_for_persisted(creds_path, raced)
        if persisted is not None and creds_path is not None:
            usable = usable_credentials(persisted, creds_path)
            if usable is not None:
                try:
                    return await self._bind_persisted(name, *usable)
                except nats.errors.AuthorizationError:
                    # Unexpired but refused: revoked, or issued into an account the deployment no longer admits
                    # identities to (an upgraded layout). The registered key asks for fresh ones, as when expired.
                    log.warning("persisted credentials of %s refused; attaching", name)
            # Expired or refused: the registered key asks for a fresh JWT; only the holder of its seed can use it.
            request: dict[str, Any] = {"name_or_id": name, "public_key": public_key_of(persisted.seed)}
            if passport is not None and passport.get("auth") is not None:
                request["auth"] = passport["auth"]
            result = await self.call("attach", request)
            return await self._bind(issued_identity(result, seed=persisted.seed, creds_path=creds_path))
        if not self._secured:
            agent_id = await self.find_agent_id(name)
            if agent_id is not None:
                return await self._bind(IdentityGrant(await self.get_agent(agent_id), None))
        # The name is new (or, secured, cannot be told without its credentials): register it.
        if passport is None:
            where = creds_path if creds_path is not None else "(no creds_path)"
            raise TypeError(
                f"attach({name!r}): no credentials of {name!r} at {where}; pass passport= to register it"
                if self._secured
                else f"attach({name!r}): name is not registered; pass passport= to register it"
            )
        fields = {**passport, "name": name, **({"kind": "human"} if human else {})}
        try:
            return await self._register_identity(fields, {}, creds_path)
        except ProtocolError as err:
            if not is_name_taken(err):
                raise
            # Another replica registered the name between the lookup and the registration: attach to that identity
            # (on a secured deployment, with the credentials that replica persisted at the shared `creds_path`).
            if raced or (self._secured and creds_path is None):
                raise IdentityCredentialsError(
                    f"attach({name!r}): {name!r} is registered; attaching to it needs its own credentials (creds_path)"
                ) from err
            return await self._attach_identity(name, None, creds_path, human=human, raced=True)

    async def _bind(self, identity: IdentityGrant) -> _Grant:
        """A hub client bound to the identity: over its own connection when it has credentials."""
        agent_id = identity.passport.agent_id
        if agent_id is None:
            raise TypeError("the hub answered an unstamped passport")
        if identity.credentials is None:
            bound = HubClient(
                self.nc,
                self._prefix,
                self._retry_for,
                False,
                servers=self._servers,
                secured=self._secured,
                default_caller=agent_id,
                parent=self,
                partitions=self.rpc.known_partitions,
            )
            return identity.passport, bound
        hub = await self._open_identity(agent_id, identity.passport.name, identity.credentials)
        return identity.passport, hub

    async def _bind_persisted(self, name: str, agent_id: str, credentials: IdentityCredentials) -> _Grant:
        """Binds persisted credentials that are still valid: the passport is read over the identity's own connection."""
        hub = await self._open_identity(agent_id, name, credentials)
        try:
            passport = await hub.get_agent(agent_id)
            if passport.name != name:
                raise IdentityCredentialsError(f"{credentials.creds_path} belong to {passport.name!r}, not {name!r}")
        except BaseException:
            await hub.close()
            raise
        return passport, hub

    async def _open_identity(self, agent_id: str, name: str, credentials: IdentityCredentials) -> HubClient:
        """Opens the identity's own connection with its credentials and keeps them renewed while the client lives."""
        source = CredentialSource(credentials.user)
        servers = self._servers if self._servers is not None else server_of(self.nc)
        nc = await open_connection(servers, source, inbox_prefix=credentials.inbox_prefix, name=f"ag2net {name}")
        hub = HubClient(
            nc,
            self._prefix,
            self._retry_for,
            True,
            servers=servers,
            secured=True,
            default_caller=agent_id,
            parent=self,
            partitions=self.rpc.known_partitions,
        )

        hub._renewal = keep_renewed(hub, nc, source, credentials, who=f"{name} ({agent_id})")
        return hub

    async def _start(self, grant: _Grant, start: ParticipantStart[_P]) -> _P:
        """Starts the participant of `grant` on its bound hub client; closes that client when the start fails."""
        passport, hub = grant
        try:
            participant = await start(hub, passport)
        except BaseException:
            await hub.close()
            raise
        self._participants.add(participant)
        hub._participants.add(participant)
        return participant

    async def _forget(self, participant: Participant) -> None:
        """A participant that disconnected. A client bound to that identity then closes too (its own connection, its
        renewal)."""
        self._participants.discard(participant)
        if self._parent is None:
            return
        await self._parent._forget(participant)
        if not self._participants and not self._closing:
            await self.close()

    async def close(self, grace: float = DEFAULT_DISCONNECT_GRACE) -> None:
        """Disconnects every participant (turns in flight get `grace`), stops a bound identity's credential renewal,
        then closes the connection it opened. Idempotent."""
        if self._closing:
            return
        self._closing = True
        # Turns in flight keep calling the hub during their grace: the client refuses calls only once they ended.
        await asyncio.gather(*(p.disconnect(grace) for p in list(self._participants)))
        self._closed = True
        if self._renewal is not None:
            self._renewal.cancel()
            with contextlib.suppress(BaseException):
                await self._renewal
        if self._owns:
            await self.nc.close()

    async def __aenter__(self) -> HubClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()


#: A registered identity and the hub client bound to it.
_Grant = tuple[Passport, HubClient]


def _lag_of(result: dict[str, Any]) -> DeliveryLag | None:
    delivery = result.get("delivery")
    return None if delivery is None else DeliveryLag.model_validate(delivery)
