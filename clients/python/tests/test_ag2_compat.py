"""The `[ag2]` extra against the real `ag2` package: envelope conversion both ways, byte for byte with AG2's own
`Envelope.to_json()`, and the turn input rule."""

from __future__ import annotations

from ag2.network import Envelope as Ag2Envelope

from ag2net import Envelope
from ag2net.ag2_compat import from_ag2_envelope, to_ag2_envelope, turn_input

from .conftest import fixture


def test_ag2_envelope_to_json_is_the_fixture_bytes() -> None:
    for case in fixture("envelopes.json")["valid"]:
        converted = to_ag2_envelope(Envelope.model_validate(case["json"]))
        assert isinstance(converted, Ag2Envelope)
        assert converted.to_json() == case["ag2_json"]


def test_round_trip_keeps_every_field_but_sequence() -> None:
    for case in fixture("envelopes.json")["valid"]:
        original = Envelope.model_validate(case["json"])
        back = from_ag2_envelope(to_ag2_envelope(original))
        assert back.model_dump(exclude={"sequence"}) == original.model_dump(exclude={"sequence"})
        assert back.sequence is None


def test_an_envelope_ag2_wrote_is_read_back() -> None:
    written = Ag2Envelope(
        channel_id="c1", sender_id="alice", audience=None, event_type="ag2.msg.text", event_data={"text": "hi"}
    )
    assert from_ag2_envelope(Ag2Envelope.from_json(written.to_json())).model_dump(exclude_none=True) == {
        "channel_id": "c1",
        "sender_id": "alice",
        "event_type": "ag2.msg.text",
        "event_data": {"text": "hi"},
        "envelope_id": "",
        "priority": "normal",
        "depth": 0,
        "created_at": "",
    }


def _envelope(event_type: str, event_data: dict[str, object]) -> Envelope:
    return Envelope.model_validate(
        {"channel_id": "c", "sender_id": "s", "event_type": event_type, "event_data": event_data}
    )


def test_turn_input_follows_the_protocol_rule() -> None:
    assert turn_input(_envelope("ag2.msg.text", {"text": "question"})) == "question"
    assert turn_input(_envelope("ag2.packet", {"body": "work", "routing": {"kind": "text"}})) == "work"
    assert turn_input(_envelope("ag2.msg.text", {"text": ""})) is None
    assert turn_input(_envelope("ag2.turn.failed", {"agent_name": "a", "reason": "r", "code": "turn_error"})) is None
    assert turn_input(_envelope("custom.event", {"text": "not a turn"})) is None
