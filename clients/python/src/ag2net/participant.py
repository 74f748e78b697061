"""Participants (agents and people) and channels: the Python face of docs/client.md."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import Any

from .errors import DisconnectedError, EnvelopeTimeoutError
from .event_types import EV_CHANNEL_CLOSED, EV_CHANNEL_EXPIRED, EV_TEXT, is_protocol_event
from .ids import new_id, reply_envelope_id
from .inbox import DEFAULT_DISCONNECT_GRACE, Inbox, Predicate, Settle, Subscription, Subscriptions
from .models import ChannelMetadata, Envelope, Passport
from .op_results import PendingTurn, PostAck
from .participant_hub import ParticipantHub
from .partitions import partition_of
from .parts import Rendered, text_data

#: How many recent deliveries a person's client keeps for one-shot waits that start after they arrived.
RECENT_DELIVERIES = 256
#: Time `open` waits for every invitee to accept, in seconds (the hub's ack timeout is 30 s).
OPEN_TIMEOUT = 60.0
_READ_WAL_PAGE = 1000


class Participant:
    """An identity with a durable inbox, subscriptions to its deliveries, sending and its per-caller operations."""

    def __init__(self, hub: ParticipantHub, passport: Passport) -> None:
        if passport.agent_id is None:
            raise ValueError("participant has an unstamped passport (not registered)")
        self.hub = hub
        self.passport = passport
        self.agent_id: str = passport.agent_id
        self._subscriptions = Subscriptions()
        self._recent: list[Envelope] = []
        self._inbox = Inbox(hub.nc, hub.rpc.names, self.agent_id, self._handle, self._publish)
        self.disconnected = False

    #: Whether one-shot waits also see recent deliveries no wait took yet (people: send, then wait for the answer).
    keeps_recent_deliveries = False

    def _publish(self, envelope: Envelope) -> None:
        if self.keeps_recent_deliveries:
            self._recent.append(envelope)
            if len(self._recent) > RECENT_DELIVERIES:
                self._recent.pop(0)
        self._subscriptions.publish(envelope)

    def _take_recent(self, predicate: Predicate | None) -> Envelope | None:
        for i, envelope in enumerate(self._recent):
            if predicate is None or predicate(envelope):
                return self._recent.pop(i)
        return None

    async def _start(self) -> None:
        await self._inbox.start()

    async def _handle(self, envelope: Envelope) -> Settle:
        raise NotImplementedError

    async def _call(self, op: str, request: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        if self.disconnected:
            raise DisconnectedError(f"{self.passport.name} is disconnected")
        return await self.hub.call(op, request, self.agent_id, timeout=timeout)

    async def open(
        self,
        type: str,  # noqa: A002 - the wire name
        target: str | Sequence[str],
        *,
        knobs: dict[str, Any] | None = None,
        ttl: str | int | None = None,
        intent: str | None = None,
        labels: dict[str, str] | None = None,
    ) -> Channel:
        """Opens a channel with `target` (names or ids); returns once every invitee accepted."""
        targets = [target] if isinstance(target, str) else list(target)
        ids = [(await self.hub.get_agent(t)).agent_id or t for t in targets]
        request: dict[str, Any] = {
            "channel_id": new_id(),
            "type": type,
            "participants": ids,
            "knobs": knobs or {},
            "labels": labels or {},
        }
        if ttl is not None:
            request["ttl"] = ttl
        if intent is not None:
            request["intent"] = intent
        result = await self._call("createChannel", request, timeout=OPEN_TIMEOUT)
        return Channel(ChannelMetadata.model_validate(result["channel"]), self)

    async def channel(self, channel_id: str) -> Channel:
        return Channel(await self.get_channel(channel_id), self)

    async def get_channel(self, channel_id: str) -> ChannelMetadata:
        """A channel's metadata, read as this identity (a participant of it)."""
        return await self.hub.get_channel(channel_id, self.agent_id)

    async def list_channels(self, filter: dict[str, Any] | None = None) -> list[ChannelMetadata]:  # noqa: A002
        """The channels this identity takes part in (`filter`: `state`, `type`, `limit`, … as `listChannels`)."""
        return await self.hub.list_channels(filter, self.agent_id)

    async def adapter_state(self, channel_id: str) -> dict[str, Any] | None:
        """A channel's adapter state as this identity may see it; None when it has none."""
        return await self.hub.adapter_state(channel_id, self.agent_id)

    async def send(
        self,
        channel_id: str,
        content: Rendered,
        *,
        audience: Sequence[str] | None = None,
        causation_id: str | None = None,
        depth: int = 0,
    ) -> str:
        """Posts `ag2.msg.text`, text or parts (see `ag2net.parts`); returns the admitted envelope's id."""
        ack = await self.send_envelope(
            {
                "channel_id": channel_id,
                "event_type": EV_TEXT,
                "event_data": text_data(content),
                "audience": list(audience) if audience is not None else None,
                "causation_id": causation_id,
                "depth": depth,
            }
        )
        return ack.envelope_id

    async def reply(self, trigger: Envelope, text: str) -> str:
        """Answers `trigger` with text under the deterministic reply id: every attempt and replica is admitted once."""
        ack = await self.send_envelope(
            {
                "channel_id": trigger.channel_id,
                "event_type": EV_TEXT,
                "event_data": {"text": text},
                "causation_id": trigger.envelope_id,
                "envelope_id": reply_envelope_id(self.agent_id, trigger.envelope_id),
            }
        )
        return ack.envelope_id

    async def send_envelope(self, envelope: Envelope | dict[str, Any]) -> PostAck:
        """Posts any envelope as this identity (`sender_id` is set); a client-minted id makes retries admitted once."""
        fields = envelope.model_dump() if isinstance(envelope, Envelope) else dict(envelope)
        fields["sender_id"] = self.agent_id
        if not fields.get("envelope_id"):
            fields["envelope_id"] = new_id()
        body = Envelope.model_validate(fields).model_dump(mode="json", exclude={"sequence"})
        return PostAck.model_validate(await self._call("post", body))

    async def close_channel(self, channel_id: str, reason: str = "") -> ChannelMetadata:
        result = await self._call("closeChannel", {"channel_id": channel_id, "reason": reason})
        return ChannelMetadata.model_validate(result["channel"])

    async def read_wal(self, channel_id: str, since: int | None = None, until: int | None = None) -> list[Envelope]:
        """The channel's envelopes this identity may see, following the hub's pages up to 1000."""
        out: list[Envelope] = []
        cursor = since
        while True:
            request: dict[str, Any] = {"channel_id": channel_id, "limit": _READ_WAL_PAGE - len(out)}
            if cursor is not None:
                request["since"] = cursor
            if until is not None:
                request["until"] = until
            page = await self._call("readWal", request)
            out.extend(Envelope.model_validate(e) for e in page["envelopes"])
            next_since = page.get("next_since")
            if not isinstance(next_since, int) or len(out) >= _READ_WAL_PAGE:
                return out
            cursor = next_since

    async def can_send(self, channel_id: str, event_type: str | None = None) -> bool:
        """Whether the channel's protocol lets this identity post `event_type` (default `ag2.msg.text`) now, as
        `canSend`. It says nothing about *which* delivery to answer: see `is_my_turn`."""
        result = await self._call("canSend", {"channel_id": channel_id, "event_type": event_type})
        return bool(result["allowed"])

    async def pending_turns(self) -> list[PendingTurn]:
        """Every turn the hub expects from this identity, one per channel where it is the expected speaker
        (`pendingTurnsFor`); a conversation never expects anyone. With several partitions every partition is asked
        for its own channels, and the turns are joined by `expected_at`, then channel id."""
        count = await self.hub.partitions()
        if count == 1:
            return await self._pending_turns_in(None)
        parts = await asyncio.gather(*(self._pending_turns_in(k) for k in range(count)))
        turns = [turn for part in parts for turn in part]
        return sorted(turns, key=lambda t: (t.expected_at or "", t.channel_id))

    async def _pending_turns_in(self, partition: int | None) -> list[PendingTurn]:
        """The turns one partition expects from this identity (`None`: the deployment has one partition)."""
        if self.disconnected:
            raise DisconnectedError(f"{self.passport.name} is disconnected")
        result = await self.hub.call("pendingTurnsFor", {}, self.agent_id, partition=partition)
        return [PendingTurn.model_validate(t) for t in result["turns"]]

    async def is_my_turn(self, envelope: Envelope) -> bool:
        """Whether answering `envelope` now is this identity's turn. The channel's protocol must let it post
        (`can_send`), and where the hub expects it (a consulting respondent, a discussion's next speaker, a workflow's)
        `envelope` must be the trigger of that turn (`triggering_envelope_id` of `pending_turns`): `can_send` alone is
        not enough, since a discussion may already have moved on to this identity's next turn while an older delivery
        waits its turn. Where nobody is expected (a conversation), any envelope it may answer. Never its own envelopes
        nor protocol events (`ag2.channel.*`, `ag2.task.*`). A channel that ends between this check and the answer
        refuses the answer (`protocol_error`)."""
        if envelope.sender_id == self.agent_id or is_protocol_event(envelope.event_type):
            return False
        # can_send first: once it may send, only its own post moves the channel on (another replica waits for the
        # turn lock), so the expected trigger read next is still the one of this turn.
        if not await self.can_send(envelope.channel_id):
            return False
        # Only the channel's partition knows the turns it expects.
        count = await self.hub.partitions()
        turns = await self._pending_turns_in(None if count == 1 else partition_of(envelope.channel_id, count))
        expected = next((t for t in turns if t.channel_id == envelope.channel_id), None)
        return expected is None or expected.triggering_envelope_id == envelope.envelope_id

    async def find_envelope_by_causation(self, channel_id: str, sender_id: str, causation_id: str) -> Envelope | None:
        """The envelope `sender_id` posted in answer to `causation_id`, if any (AG2's dedupe before a turn)."""
        result = await self._call(
            "findEnvelopeByCausation",
            {"channel_id": channel_id, "sender_id": sender_id, "causation_id": causation_id},
        )
        found = result.get("envelope")
        return None if found is None else Envelope.model_validate(found)

    def subscribe(self, predicate: Predicate | None = None, channel_id: str | None = None) -> Subscription:
        """Every matching delivery from now on (nothing earlier is replayed); ends when the participant disconnects.
        `predicate` is a plain function `(envelope) -> bool`, never a coroutine function (it runs at each delivery)."""
        _check_predicate(predicate)
        if channel_id is None:
            return self._subscriptions.subscribe(predicate)

        def in_channel(e: Envelope) -> bool:
            return e.channel_id == channel_id and (predicate is None or predicate(e))

        return self._subscriptions.subscribe(in_channel)

    def envelopes(self) -> AsyncIterator[Envelope]:
        """`async for envelope in client.envelopes()`: every delivery from the call on."""
        return self._subscriptions.subscribe().__aiter__()

    def next_envelope(
        self, predicate: Predicate | None = None, timeout: float | None = None
    ) -> Awaitable[Envelope | None]:
        """The next matching delivery from the *call* on (call it before the action it waits for, await it after);
        `EnvelopeTimeoutError` on timeout, `None` when the participant disconnects while waiting. A person's client
        first takes the oldest of its recent deliveries (the latest 256) that no wait took yet and that match."""
        _check_predicate(predicate)
        if self.disconnected:
            raise DisconnectedError(f"{self.passport.name} is disconnected")
        recent = self._take_recent(predicate)
        sub = self.subscribe(predicate)

        async def wait() -> Envelope | None:
            if recent is not None:
                sub.close()
                return recent
            try:
                envelope = await sub.receive(timeout)
                if envelope is not None and envelope in self._recent:
                    self._recent.remove(envelope)
                return envelope
            except TimeoutError as err:
                raise EnvelopeTimeoutError(f"no matching envelope within {timeout} s") from err
            finally:
                sub.close()

        return wait()

    def wait_for_channel_event(
        self, channel_id: str, predicate: Predicate | None = None, timeout: float | None = None
    ) -> Awaitable[Envelope | None]:
        """The next delivery of `channel_id` that matches (default: the channel closed or expired)."""

        def ended(e: Envelope) -> bool:
            return e.event_type in (EV_CHANNEL_CLOSED, EV_CHANNEL_EXPIRED)

        return self.next_envelope(lambda e: e.channel_id == channel_id and (predicate or ended)(e), timeout=timeout)

    async def disconnect(self, grace: float = DEFAULT_DISCONNECT_GRACE) -> None:
        """Stops consuming: deliveries not started go back; turns in flight get `grace` seconds, then are cancelled."""
        if self.disconnected:
            return
        self.disconnected = True
        await self._inbox.stop(grace)
        self._subscriptions.end()
        await self.hub._forget(self)

    async def unregister(self) -> None:
        await self._call("unregister", {})
        await self.disconnect()


class Channel:
    """A channel as one participant sees it."""

    def __init__(self, metadata: ChannelMetadata, owner: Participant) -> None:
        self.metadata = metadata
        self._owner = owner

    @property
    def channel_id(self) -> str:
        return self.metadata.channel_id

    @property
    def state(self) -> str:
        return self.metadata.state

    async def send(
        self, content: Rendered, *, audience: Sequence[str] | None = None, causation_id: str | None = None
    ) -> str:
        return await self._owner.send(self.channel_id, content, audience=audience, causation_id=causation_id)

    async def info(self) -> ChannelMetadata:
        self.metadata = await self._owner.get_channel(self.channel_id)
        return self.metadata

    async def close(self, reason: str = "") -> ChannelMetadata:
        self.metadata = await self._owner.close_channel(self.channel_id, reason)
        return self.metadata

    def is_terminal(self) -> bool:
        return self.metadata.state in ("closed", "expired")

    async def read(self, since: int = 1) -> list[Envelope]:
        return await self._owner.read_wal(self.channel_id, since=since)


def _check_predicate(predicate: Predicate | None) -> None:
    """A coroutine function's result is always truthy: as a predicate it would match everything."""
    if predicate is not None and inspect.iscoroutinefunction(predicate):
        raise TypeError("a predicate is a plain function (envelope) -> bool, not an async def")
