"""The cross-language fixtures of conformance/fixtures, checked on the Python side (the TypeScript side is
packages/protocol/test/conformance.test.ts)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from ag2net import HUB_OPS, Envelope, UnknownNetworkError, error_from_wire, reply_envelope_id
from ag2net.errors import RETRYABLE_ERROR_CODES

from .conftest import fixture


def test_reply_ids_match_the_typescript_derivation() -> None:
    cases = fixture("reply-ids.json")
    assert len(cases) == 8
    for case in cases:
        assert reply_envelope_id(case["agent_id"], case["trigger_id"]) == case["reply_id"]


def test_hub_ops_match_caller_and_idempotent_flags() -> None:
    declared = {op: {"caller": s.caller, "idempotent": s.idempotent} for op, s in HUB_OPS.items()}
    assert declared == fixture("hub-ops.json")


def test_wire_errors_rebuild_with_their_codes_and_keep_unknown_ones() -> None:
    data = fixture("errors.json")
    assert list(RETRYABLE_ERROR_CODES) == data["retryable_codes"]
    for case in data["wire"]:
        err = error_from_wire(case["wire"])
        assert err.code == case["code"]
        assert isinstance(err, UnknownNetworkError) is (not case["known"])
        if not case.get("malformed"):
            assert err.to_wire() == case["wire"]


def _ag2_json(envelope: Envelope) -> str:
    """An envelope as AG2's `Envelope.to_json()` writes it: `sequence` dropped, sorted keys, ASCII escapes."""
    return json.dumps(envelope.model_dump(mode="json", exclude={"sequence"}), sort_keys=True)


def test_valid_envelopes_parse_and_encode_as_ag2_byte_for_byte() -> None:
    valid = fixture("envelopes.json")["valid"]
    assert [c["name"] for c in valid] == ["minimal", "hub-stamped", "float-as-integer", "reply-id"]
    for case in valid:
        assert _ag2_json(Envelope.model_validate(case["json"])) == case["ag2_json"]


@pytest.mark.parametrize("case", fixture("envelopes.json")["invalid"], ids=lambda c: str(c["name"]))
def test_invalid_envelopes_are_refused(case: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Envelope.model_validate(case["json"])
