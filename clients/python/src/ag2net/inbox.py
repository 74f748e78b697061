"""Consumption of one identity's durable inbox (`agent_<id>` on `<P>_INBOX`), and subscriptions to its deliveries.

At-least-once, as the TypeScript client: each delivery is parsed, handled, then acked; one channel's deliveries are
handled in order and one at a time (channels in parallel); duplicates are dropped by envelope id; a long turn keeps
its delivery from being redelivered (`in_progress` every third of the ack wait); a delivery handed back is nak'ed
with a delay; on stop, deliveries not started go back at once and turns in flight get a grace, then are cancelled.
Only deliveries the hub published are accepted (header `Ag2-Origin: hub`; with the deployment's permissions no identity
can publish on an inbox subject): anything else is terminated unread, never handed to the participant.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import nats.errors
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.js.client import JetStreamContext
from pydantic import ValidationError

from .models import Envelope
from .rpc import HubNames

log = logging.getLogger("ag2net")

#: Envelope ids remembered per participant to drop duplicates.
RECENT_IDS = 10_000
#: Default grace of turns in flight at disconnect, in seconds.
DEFAULT_DISCONNECT_GRACE = 10.0
#: The header the hub sets on every delivery it publishes (`DeliveryHeader.Origin`), and its value.
DELIVERY_ORIGIN_HEADER = "Ag2-Origin"
DELIVERY_ORIGIN_HUB = "hub"


@dataclass(frozen=True)
class Settle:
    """What to do with a handled delivery: ack it, or hand it back after `delay` seconds."""

    ack: bool
    delay: float = 0.0


ACK = Settle(ack=True)

Handle = Callable[[Envelope], Coroutine[Any, Any, Settle]]
Predicate = Callable[[Envelope], bool]


class RecentIds:
    def __init__(self, capacity: int = RECENT_IDS) -> None:
        self._ids: OrderedDict[str, None] = OrderedDict()
        self._capacity = capacity

    def __contains__(self, envelope_id: str) -> bool:
        return envelope_id in self._ids

    def add(self, envelope_id: str) -> bool:
        """Adds the id; False when it was already there."""
        if envelope_id in self._ids:
            return False
        self._ids[envelope_id] = None
        if len(self._ids) > self._capacity:
            self._ids.popitem(last=False)
        return True


class Subscription:
    """Every matching delivery from its creation on; `async for` over it, or `receive(timeout)`."""

    def __init__(self, owner: Subscriptions, predicate: Predicate | None) -> None:
        self._owner = owner
        self.predicate = predicate
        self._queue: asyncio.Queue[Envelope | None] = asyncio.Queue()
        self.closed = False

    def offer(self, envelope: Envelope) -> None:
        if not self.closed and (self.predicate is None or self.predicate(envelope)):
            self._queue.put_nowait(envelope)

    def end(self) -> None:
        self._queue.put_nowait(None)

    async def receive(self, timeout: float | None = None) -> Envelope | None:
        """The next matching delivery; `None` when the participant disconnected; `TimeoutError` on timeout."""
        item = await asyncio.wait_for(self._queue.get(), timeout)
        if item is None:
            self._queue.put_nowait(None)
        return item

    def close(self) -> None:
        self.closed = True
        self._owner.remove(self)

    async def __aiter__(self) -> AsyncIterator[Envelope]:
        try:
            while (item := await self.receive()) is not None:
                yield item
        finally:
            self.close()


class Subscriptions:
    def __init__(self) -> None:
        self._open: list[Subscription] = []
        self.ended = False

    def subscribe(self, predicate: Predicate | None = None) -> Subscription:
        sub = Subscription(self, predicate)
        if self.ended:
            sub.end()
        else:
            self._open.append(sub)
        return sub

    def remove(self, sub: Subscription) -> None:
        with contextlib.suppress(ValueError):
            self._open.remove(sub)

    def publish(self, envelope: Envelope) -> None:
        for sub in list(self._open):
            sub.offer(envelope)

    def end(self) -> None:
        self.ended = True
        for sub in self._open:
            sub.end()
        self._open.clear()


class Inbox:
    """The consumer loop of one identity."""

    def __init__(
        self, nc: NatsClient, names: HubNames, agent_id: str, handle: Handle, publish: Callable[[Envelope], None]
    ) -> None:
        self._nc = nc
        self._names = names
        self._agent_id = agent_id
        self._handle = handle
        self._publish = publish
        self._seen = RecentIds()
        self._published = RecentIds()
        self._tails: dict[str, asyncio.Task[None]] = {}
        self._turns: set[asyncio.Task[Settle]] = set()
        self._background: set[asyncio.Task[None]] = set()
        self.stopping = False
        self._loop: asyncio.Task[None] | None = None
        self._keep_alive = 20.0

    async def start(self) -> None:
        js = self._nc.jetstream()
        consumer = self._names.inbox_consumer(self._agent_id)
        self._psub = await self._subscribe()
        info = await js.consumer_info(self._names.inbox_stream, consumer)
        self._keep_alive = max(0.1, (info.config.ack_wait or 60.0) / 3)
        self._loop = asyncio.create_task(self._consume())

    async def _subscribe(self) -> JetStreamContext.PullSubscription:
        """A pull subscription of the inbox consumer, on a subject of its own."""
        consumer = self._names.inbox_consumer(self._agent_id)
        return await self._nc.jetstream().pull_subscribe_bind(durable=consumer, stream=self._names.inbox_stream)

    async def _consume(self) -> None:
        reconnects = self._nc.stats["reconnects"]
        while not self.stopping:
            if self._nc.stats["reconnects"] != reconnects and not self._nc.is_closed:
                # A pull left waiting when the connection dropped gets the next delivery once its subject has a
                # subscriber again, through a reply the server forgot: pull on a new subject instead, so that the
                # server drops the old pulls, which then have no interest.
                reconnects = self._nc.stats["reconnects"]
                with contextlib.suppress(Exception):
                    await self._psub.unsubscribe()
                try:
                    self._psub = await self._subscribe()
                except Exception as err:  # noqa: BLE001 - the connection is reconnecting again; try once more
                    log.warning("inbox pull subscription failed: %s", err)
                    reconnects = -1
                    await asyncio.sleep(0.5)
                    continue
            try:
                messages = await self._psub.fetch(batch=64, timeout=1.0)
            except (TimeoutError, nats.errors.TimeoutError):
                continue
            except Exception as err:  # noqa: BLE001 - the connection is reconnecting; keep pulling
                if self.stopping:
                    return
                if self._nc.is_closed:
                    # Closed for good (its credentials lapsed, or it was closed): nothing can be pulled or acked now.
                    log.error("inbox consumption of %s ended: the connection closed", self._agent_id)
                    return
                log.warning("inbox fetch failed: %s", err)
                await asyncio.sleep(0.5)
                continue
            for m in messages:
                self._accept(m)

    def _accept(self, m: Msg) -> None:
        if (m.headers or {}).get(DELIVERY_ORIGIN_HEADER) != DELIVERY_ORIGIN_HUB:
            log.warning("dropping a delivery of %s the hub did not send (subject %s)", self._agent_id, m.subject)
            self._settle_in_background(m.term())
            return
        try:
            envelope = Envelope.model_validate(json.loads(m.data))
        except (ValueError, ValidationError):
            log.warning("dropping a malformed delivery of %s", self._agent_id)
            self._settle_in_background(m.term())
            return
        previous = self._tails.get(envelope.channel_id)
        tail = asyncio.create_task(self._deliver_after(previous, envelope, m))
        self._tails[envelope.channel_id] = tail
        tail.add_done_callback(
            lambda t: self._tails.pop(envelope.channel_id, None) if self._tails.get(envelope.channel_id) is t else None
        )

    def _settle_in_background(self, settle: Coroutine[Any, Any, None]) -> None:
        async def quietly() -> None:
            # A connection that closed cannot settle: the server redelivers after the ack wait.
            with contextlib.suppress(Exception):
                await settle

        task = asyncio.create_task(quietly())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _deliver_after(self, previous: asyncio.Task[None] | None, envelope: Envelope, m: Msg) -> None:
        if previous is not None:
            with contextlib.suppress(BaseException):
                await asyncio.shield(previous)
        try:
            await self._deliver(envelope, m)
        except Exception as err:  # noqa: BLE001 - settled below; the delivery comes back
            log.error("delivery failed: %s", err)
            with contextlib.suppress(Exception):
                await m.nak(delay=1.0)

    async def _deliver(self, envelope: Envelope, m: Msg) -> None:
        if self.stopping:
            await m.nak()
            return
        if envelope.envelope_id in self._seen:
            await m.ack()
            return
        if self._published.add(envelope.envelope_id):
            self._publish(envelope)
        keep_alive = asyncio.create_task(self._working(m))
        turn = asyncio.create_task(self._handle(envelope))
        self._turns.add(turn)
        try:
            outcome = await asyncio.shield(turn)
        except asyncio.CancelledError:
            await m.nak()
            return
        finally:
            self._turns.discard(turn)
            keep_alive.cancel()
        if outcome.ack:
            self._seen.add(envelope.envelope_id)
            await m.ack()
        else:
            await m.nak(delay=outcome.delay)

    async def _working(self, m: Msg) -> None:
        while True:
            await asyncio.sleep(self._keep_alive)
            with contextlib.suppress(Exception):
                await m.in_progress()

    async def stop(self, grace: float) -> None:
        """Deliveries not started go back at once; turns in flight get `grace`, then are cancelled (and go back)."""
        if self.stopping:
            return
        self.stopping = True
        if self._loop is not None:
            self._loop.cancel()
            with contextlib.suppress(BaseException):
                await self._loop
        tails = list(self._tails.values())
        if tails:
            _, pending = await asyncio.wait(tails, timeout=grace)
            if pending:
                for turn in list(self._turns):
                    turn.cancel()
                await asyncio.wait(pending, timeout=1.0)
        with contextlib.suppress(Exception):
            await self._psub.unsubscribe()
