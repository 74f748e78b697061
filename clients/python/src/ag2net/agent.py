"""`AgentClient`: an agent whose handler runs each delivery under the cross-language turn lock, with bounded retries."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from .callbacks import MaybeAwaitable, settle
from .errors import HubError, TurnLockLostError, is_final_error
from .event_types import EV_EXPECTATION_VIOLATED, is_protocol_event
from .inbox import ACK, Settle
from .invites import ack_invite, is_invite_for
from .models import Envelope, Passport
from .participant import Participant
from .participant_hub import ParticipantHub
from .turn_locks import TurnLease, TurnLocks
from .turn_retries import DEFAULT_MAX_TURN_ATTEMPTS, DEFAULT_TURN_RETRY_BACKOFF, TurnAttempts

log = logging.getLogger("ag2net")

#: A delivery whose channel's turn lock is held elsewhere (or whose turn was cancelled) comes back after this, in s.
LOCK_BUSY_RETRY = 0.5

#: What an agent does with a delivery: `(envelope, client)`, an `async def` or a plain function.
AgentHandler = Callable[[Envelope, "AgentClient"], MaybeAwaitable]
#: Told about a turn that failed for good: `(envelope, error, attempts)`, an `async def` or a plain function.
TurnFailedListener = Callable[[Envelope, BaseException, int], MaybeAwaitable]


async def accept_invites(envelope: Envelope, client: AgentClient) -> None:
    """The handler of an agent without one: accept every invite, ignore the rest."""
    if is_invite_for(client, envelope):
        await ack_invite(client, envelope)


class AgentClient(Participant):
    """An agent. Its handler `(envelope, client)` runs once per delivery, in order per channel, holding the
    (agent, channel) turn lock (shared with TypeScript replicas); it is cancelled (`asyncio.CancelledError`) when
    the lock is lost or the disconnect grace ran out, and then its delivery is redelivered, never acked. A handler
    that raises is retried with backoff (1 s doubling, at most 60 s) up to `max_turn_attempts`, then
    `on_turn_failed` runs and the delivery is acked; one that raises a final wire error (`is_final_error`: the hub
    refused what the turn did, e.g. `protocol_error` for a closed channel or a turn out of order) is not retried:
    `on_turn_failed` runs at once. The handler and `on_turn_failed` may be `async def`s or plain functions."""

    def __init__(
        self,
        hub: ParticipantHub,
        passport: Passport,
        *,
        handler: AgentHandler | None = None,
        max_turn_attempts: int = DEFAULT_MAX_TURN_ATTEMPTS,
        turn_retry_backoff: float = DEFAULT_TURN_RETRY_BACKOFF,
        on_turn_failed: TurnFailedListener | None = None,
    ) -> None:
        super().__init__(hub, passport)
        self._handler: AgentHandler = handler or accept_invites
        self._attempts = TurnAttempts(max_turn_attempts, turn_retry_backoff)
        self._on_turn_failed = on_turn_failed
        self._suppressed: set[str] = set()
        self._locks: TurnLocks | None = None

    async def _start_agent(self, exclusive_turns: bool, turn_lock_ttl: float) -> None:
        if exclusive_turns:
            self._locks = TurnLocks(self.hub, self.agent_id, ttl=turn_lock_ttl)
        await self._start()

    def on_envelope(self, handler: AgentHandler) -> None:
        """Replaces the delivery handler (an `async def` or a plain function)."""
        self._handler = handler

    def suppress_handler(self, channel_id: str) -> None:
        """Stops running the handler for one channel (its deliveries still reach subscriptions)."""
        self._suppressed.add(channel_id)

    async def _handle(self, envelope: Envelope) -> Settle:
        if envelope.channel_id in self._suppressed:
            return ACK
        envelope = await self._passed_turn(envelope) or envelope
        locks = self._locks if not is_protocol_event(envelope.event_type) else None
        if locks is None:
            return await self._run(envelope)
        channel_id = envelope.channel_id
        acquired_at = time.monotonic()
        try:
            acquired = await locks.acquire(channel_id)
        except Exception as err:  # noqa: BLE001 - no hub answered: try again later
            log.warning("turn lock unavailable: %s", err)
            return Settle(ack=False, delay=LOCK_BUSY_RETRY)
        if not acquired:
            log.debug(
                "turn lock busy: %s.%s is held by another replica; handed back", self.agent_id, envelope.channel_id
            )
            return Settle(ack=False, delay=LOCK_BUSY_RETRY)
        current = asyncio.current_task()

        def cancel_turn(_reason: TurnLockLostError) -> None:
            if current is not None:
                current.cancel()

        lease = TurnLease(locks.ttl, lambda: locks.renew(channel_id), acquired_at, cancel_turn)
        try:
            return await self._run(envelope)
        except asyncio.CancelledError:
            if lease.lost is None:
                raise
            if current is not None:
                current.uncancel()
            log.warning("turn lock lost; turn aborted (%s)", lease.lost)
            return Settle(ack=False, delay=LOCK_BUSY_RETRY)
        finally:
            lease.stop()
            if lease.lost is None:
                # Bounded: a lock whose release got no answer lapses by its TTL anyway.
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(locks.release(channel_id), timeout=locks.ttl)

    async def _passed_turn(self, envelope: Envelope) -> Envelope | None:
        """The trigger of the turn a `hide` record passed to this agent (the hub sends the record to the participant
        the turn passes to as well as to the hidden ones): the channel's trigger as `pending_turns` names it. None for
        any other envelope, a record that hides this agent, and a turn without a trigger or no longer this agent's."""
        if envelope.event_type != EV_EXPECTATION_VIOLATED:
            return None
        data = envelope.event_data
        violators = data.get("violators")
        if data.get("on_violation") != "hide" or not isinstance(violators, list) or self.agent_id in violators:
            return None
        turn = next((t for t in await self.pending_turns() if t.channel_id == envelope.channel_id), None)
        if turn is None or turn.triggering_envelope_id is None:
            return None
        log = await self.read_wal(envelope.channel_id)
        return next((e for e in log if e.envelope_id == turn.triggering_envelope_id), None)

    async def _run(self, envelope: Envelope) -> Settle:
        try:
            await settle(self._handler(envelope, self))
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001 - counted, retried, then reported
            return await self._failed(envelope, err)
        self._attempts.settled(envelope.envelope_id)
        return ACK

    async def _failed(self, envelope: Envelope, error: Exception) -> Settle:
        final = is_final_error(error)
        attempts, retry_in = self._attempts.fail(envelope.envelope_id, final=final)
        if retry_in is not None:
            log.warning("turn failed; retrying in %s s: %s", retry_in, error)
            return Settle(ack=False, delay=retry_in)
        if final and isinstance(error, HubError):
            log.error("turn failed: the hub refused it with %s, a final error; not retried: %s", error.code, error)
        else:
            log.error("turn failed; giving up after %d attempts: %s", attempts, error)
        if self._on_turn_failed is not None:
            try:
                await settle(self._on_turn_failed(envelope, error, attempts))
            except Exception as err:  # noqa: BLE001 - logged; the delivery is acked
                log.error("turn failure listener failed: %s", err)
        return ACK
