"""AG2 integration (the `[ag2]` extra: `pip install "ag2net[ag2]"`).

- `to_ag2_envelope` / `from_ag2_envelope` convert between ag2net's `Envelope` and AG2's own `ag2.network.Envelope`
  (the same fields but `sequence`, which AG2 has none of; `to_json()` of the result is the envelope's AG2 bytes).
- `serve_ag2_agent(hub, agent)` puts an AG2 `Agent` on the network: it answers its turns as AG2's default handler
  does for a single turn — accept invites; ignore protocol events, its own envelopes and envelopes that are not the
  trigger of its turn (`is_my_turn`); skip a trigger it already answered (`find_envelope_by_causation`); take the
  turn input by the channel protocol's rule (the text of `ag2.msg.text`, the body of `ag2.packet`; nothing else
  starts a turn); ask the agent and reply under the deterministic reply id. A turn that fails on every attempt, or
  at once with a final wire error, posts `ag2.turn.failed` (`code` `turn_error`). The agent sees the current input
  only (no transcript view) and gets no network tools.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ag2 import Agent
from ag2.network import Envelope as Ag2Envelope

from .agent import AgentClient
from .event_types import EV_TEXT, is_protocol_event
from .hub_client import HubClient
from .invites import ack_invite, is_invite_for
from .models import Envelope

EV_PACKET = "ag2.packet"
EV_TURN_FAILED = "ag2.turn.failed"
_MAX_REASON = 500


def to_ag2_envelope(envelope: Envelope) -> Ag2Envelope:
    """AG2's `Envelope` of an ag2net envelope: `sequence` dropped, every other field as is."""
    return Ag2Envelope(**envelope.model_dump(mode="json", exclude={"sequence"}))


def from_ag2_envelope(envelope: Ag2Envelope) -> Envelope:
    """The ag2net envelope of an AG2 one (validated like any wire envelope)."""
    return Envelope.model_validate(envelope.to_dict())


def turn_input(envelope: Envelope) -> str | None:
    """The text a turn starts from: an `ag2.msg.text`'s text or an `ag2.packet`'s body; `None` for anything else."""
    key = "text" if envelope.event_type == EV_TEXT else "body" if envelope.event_type == EV_PACKET else None
    value = envelope.event_data.get(key) if key is not None else None
    return value if isinstance(value, str) and value != "" else None


async def serve_ag2_agent(
    hub: HubClient,
    agent: Agent,
    *,
    name: str | None = None,
    passport: dict[str, Any] | None = None,
    creds_path: str | Path | None = None,
    max_turn_attempts: int = 3,
) -> AgentClient:
    """Attaches (or registers) the identity `name` (default the agent's name) and answers its turns with `agent`. On a
    secured deployment `passport` carries the admission credential (`auth`) and `creds_path` keeps the identity's
    issued credentials, as for `HubClient.attach`."""

    async def handle(envelope: Envelope, me: AgentClient) -> None:
        if is_invite_for(me, envelope):
            await ack_invite(me, envelope)
            return
        if is_protocol_event(envelope.event_type) or envelope.sender_id == me.agent_id:
            return
        text = turn_input(envelope)
        if text is None or not await me.is_my_turn(envelope):
            return
        if await me.find_envelope_by_causation(envelope.channel_id, me.agent_id, envelope.envelope_id) is not None:
            return
        reply = await agent.ask(text)
        if reply.body:
            await me.reply(envelope, reply.body)

    async def report(envelope: Envelope, error: BaseException, attempts: int) -> None:
        reason = f"{type(error).__name__} after {attempts} attempts: {error}"[:_MAX_REASON]
        await client.send_envelope(
            {
                "channel_id": envelope.channel_id,
                "event_type": EV_TURN_FAILED,
                "event_data": {"agent_name": client.passport.name, "reason": reason, "code": "turn_error"},
                "causation_id": envelope.envelope_id,
            }
        )

    identity = name or agent.name
    client = await hub.attach(
        identity,
        passport={**(passport or {}), "name": identity},
        handler=handle,
        creds_path=creds_path,
        max_turn_attempts=max_turn_attempts,
        on_turn_failed=report,
    )
    return client
