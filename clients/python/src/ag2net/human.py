"""`HumanClient`: a person on the network, whose deliveries go to callbacks and subscriptions."""

from __future__ import annotations

import logging
from collections.abc import Callable

from .callbacks import MaybeAwaitable, settle
from .inbox import ACK, Settle
from .invites import ack_invite, is_invite_for
from .models import ChannelMetadata, Envelope, Passport
from .participant import Participant
from .participant_hub import ParticipantHub

log = logging.getLogger("ag2net")

#: What a person's client does with a delivery: `(envelope)`, an `async def` or a plain function.
HumanCallback = Callable[[Envelope], MaybeAwaitable]


class HumanClient(Participant):
    """A person (kind `human`): invites accepted automatically; deliveries go to callbacks and subscriptions; a
    one-shot wait (`next_envelope`) also sees recent deliveries no wait took yet, so a wait started right after a
    send still gets an answer that arrived first."""

    keeps_recent_deliveries = True

    def __init__(self, hub: ParticipantHub, passport: Passport, auto_ack_invites: bool = True) -> None:
        super().__init__(hub, passport)
        self._auto_ack = auto_ack_invites
        self._callbacks: list[HumanCallback] = []

    def on_envelope(self, callback: HumanCallback) -> None:
        """Adds a push callback (an `async def` or a plain function); several run in the order they were added, one
        at a time. One that raises is logged."""
        self._callbacks.append(callback)

    async def close_channel(self, channel_id: str, reason: str = "human_closed") -> ChannelMetadata:
        return await super().close_channel(channel_id, reason)

    async def _handle(self, envelope: Envelope) -> Settle:
        if self._auto_ack and is_invite_for(self, envelope):
            try:
                await ack_invite(self, envelope)
            except Exception as err:  # noqa: BLE001 - logged; the delivery is acked
                log.warning("invite ack failed: %s", err)
        for callback in list(self._callbacks):
            try:
                await settle(callback(envelope))
            except Exception as err:  # noqa: BLE001 - logged; the delivery is acked
                log.error("envelope callback failed: %s", err)
        return ACK
