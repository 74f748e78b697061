"""The cross-language fixtures of conformance/fixtures, checked on the Python side (the TypeScript side is
packages/protocol/test/conformance.test.ts)."""

from __future__ import annotations

import json
from typing import Any

import nats.errors
import pytest
from pydantic import ValidationError

from ag2net import (
    HUB_OPS,
    MAX_PARTITIONS,
    PARTITIONED_OPS,
    SCATTERED_OPS,
    AgentClient,
    Envelope,
    Health,
    HeldPartition,
    HubRpc,
    HubUnavailableError,
    UnknownHubError,
    ensure_parts,
    error_from_wire,
    fnv1a32,
    hub_names,
    is_final_error,
    partition_of,
    reply_envelope_id,
    route_of,
    text_data,
)
from ag2net.errors import MAY_HAVE_APPLIED, RETRYABLE_ERROR_CODES
from ag2net.inbox import ACK, Settle
from ag2net.rpc import DEFAULT_POST_RPC_TIMEOUT, DEFAULT_RPC_TIMEOUT, default_attempt_timeout

from .conftest import fixture
from .fakes import ScriptedNats, fake_agent, health_result


def test_parts_normalise_render_and_refuse_as_the_typescript_client() -> None:
    data = fixture("parts.json")
    assert [len(data["ensure_parts"]), len(data["text_data"]), len(data["invalid_parts"])] == [5, 4, 5]
    for case in data["ensure_parts"]:
        got = [part.model_dump(mode="json") for part in ensure_parts(case["content"])]
        assert [case["name"], got] == [case["name"], case["parts"]]
    for case in data["text_data"]:
        assert [case["name"], text_data(case["content"])] == [case["name"], case["event_data"]]
    for case in data["invalid_parts"]:
        with pytest.raises(ValidationError):
            ensure_parts([case["part"]])


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
        assert isinstance(err, UnknownHubError) is (not case["known"])
        if not case.get("malformed"):
            assert err.to_wire() == case["wire"]


async def _resent(first: dict[str, Any] | Exception, op: str) -> bool:
    """Whether `HubRpc` sent `op` again after `first` (and then returned the result), or raised at once."""
    nc = ScriptedNats([first], then={"ok": True, "result": {}})
    try:
        await HubRpc(nc, "t", retry_for=5.0, partitions=1).call(op, {}, "alice")
    except Exception:  # noqa: BLE001 - raised at once: not resent
        assert len(nc.requests) == 1
        return False
    assert len(nc.requests) == 2
    return True


async def _turn_retried(error: Exception) -> tuple[bool, list[int]]:
    """Whether an agent runs a turn again after its handler raised `error`, and the attempts `on_turn_failed` got."""
    reported: list[int] = []

    def handler(envelope: Envelope, me: AgentClient) -> None:
        raise error

    agent = fake_agent(handler, lambda envelope, err, attempts: reported.append(attempts))
    trigger = Envelope.model_validate({"channel_id": "c1", "sender_id": "s", "event_type": "ag2.msg.text"})
    outcome = await agent._handle(trigger)
    assert outcome in (ACK, Settle(ack=False, delay=1.0))
    return outcome != ACK, reported


#: Idempotent and not: `resend.idempotent` and `resend.not_idempotent` of errors.json.
_OPS = {"idempotent": "post", "not_idempotent": "reportTurnFailure"}


@pytest.mark.parametrize("case", fixture("errors.json")["retry"], ids=lambda c: str(c["name"]))
async def test_a_wire_error_is_resent_and_its_turn_retried_as_errors_json_says(case: dict[str, Any]) -> None:
    assert HUB_OPS[_OPS["idempotent"]].idempotent and not HUB_OPS[_OPS["not_idempotent"]].idempotent
    reply = {"ok": False, "error": case["wire"]}
    resent = {kind: await _resent(reply, op) for kind, op in _OPS.items()}
    retried, reported = await _turn_retried(error_from_wire(case["wire"]))
    assert (resent, retried, reported) == (case["resend"], case["retry_turn"], [] if case["retry_turn"] else [1])
    assert is_final_error(error_from_wire(case["wire"])) is not case["retry_turn"]


_LOCAL: dict[str, Exception] = {
    "no_responders": nats.errors.NoRespondersError(),
    "timeout": nats.errors.TimeoutError(),
    "hub_unavailable": HubUnavailableError("no hub answered post within 30.0 s"),
    "handler_exception": RuntimeError("model down"),
}


@pytest.mark.parametrize("case", fixture("errors.json")["retry_local"], ids=lambda c: str(c["name"]))
async def test_a_local_failure_is_resent_and_its_turn_retried_as_errors_json_says(case: dict[str, Any]) -> None:
    error = _LOCAL[case["name"]]
    if "resend" in case:
        assert {kind: await _resent(error, op) for kind, op in _OPS.items()} == case["resend"]
    assert (await _turn_retried(error)) == (case["retry_turn"], [])


def test_errors_json_names_the_may_have_applied_reason() -> None:
    assert fixture("errors.json")["may_have_applied_reason"] == MAY_HAVE_APPLIED
    assert sorted(c["name"] for c in fixture("errors.json")["retry_local"]) == sorted(_LOCAL)


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


def test_default_attempt_timeouts_are_the_fixtures() -> None:
    data = fixture("rpc-attempts.json")
    assert data["post_ms"] == DEFAULT_POST_RPC_TIMEOUT * 1000
    assert data["other_ms"] == DEFAULT_RPC_TIMEOUT * 1000
    assert sorted(data["ops"]) == sorted(HUB_OPS)
    assert {op: round(default_attempt_timeout(op) * 1000) for op in HUB_OPS} == data["ops"]
    with pytest.raises(ValueError, match="unknown hub operation 'nope'"):
        default_attempt_timeout("nope")


def test_channel_ids_hash_to_the_fixtures_partitions() -> None:
    data = fixture("partitions.json")
    assert data["hash"] == "fnv1a32(utf8(channel_id)) mod partitions"
    assert [fnv1a32(""), fnv1a32("a"), fnv1a32("foobar")] == [0x811C9DC5, 0xE40C292C, 0xBF9CF968]
    assert len(data["channels"]) == 17
    for case in data["channels"]:
        channel_id = case["channel_id"]
        assert [channel_id, fnv1a32(channel_id)] == [channel_id, case["fnv1a32"]]
        assert sorted(case["partition"]) == ["1", "16", "64"]
        for count, k in case["partition"].items():
            assert [channel_id, count, partition_of(channel_id, int(count))] == [channel_id, count, k]
            assert hub_names("acme", int(count)).partition_of(channel_id) == k


def test_every_op_is_routed_as_the_fixture_says_and_the_fixture_names_every_op() -> None:
    routes = fixture("partitions.json")["routes"]
    assert sorted(routes) == sorted(HUB_OPS)
    assert {op: route_of(op) for op in HUB_OPS} == routes
    assert {op for op, route in routes.items() if route == "channel"} == PARTITIONED_OPS
    assert {op for op, route in routes.items() if route == "scattered"} == SCATTERED_OPS
    # Every routed operation carries its caller: the partition's subject ends with it.
    assert all(HUB_OPS[op].caller for op in PARTITIONED_OPS | SCATTERED_OPS)


def test_the_fixtures_subjects_are_the_clients() -> None:
    data = fixture("partitions.json")["subjects"]
    names = hub_names(data["prefix"], data["partitions"])
    assert len(data["examples"]) == 4
    for ex in data["examples"]:
        route = route_of(ex["op"])
        if route == "home":
            subject = names.rpc(ex["op"], ex.get("caller"))
        else:
            k = names.partition_of(ex["channel_id"]) if "channel_id" in ex else ex["partition"]
            subject = names.rpc_in(ex["op"], k, ex["caller"])
        assert [ex["op"], subject] == [ex["op"], ex["subject"]]
    one = data["one_partition"]
    assert hub_names(data["prefix"]).rpc_in(one["op"], 0, one["caller"]) == one["subject"]
    assert hub_names(data["prefix"], 1).rpc(one["op"], one["caller"]) == one["subject"]


@pytest.mark.parametrize("bad", [0, -1, MAX_PARTITIONS + 1, 1.5, True, "4"])
def test_a_partition_count_outside_1_to_max_partitions_is_refused(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"^partitions must be an integer from 1 to 256, not "):
        partition_of("x", bad)
    with pytest.raises(ValueError, match=r"^partitions must be an integer from 1 to 256, not "):
        hub_names("acme", bad)
    with pytest.raises(ValueError, match=r"^partitions must be an integer from 1 to 256, not "):
        HubRpc(ScriptedNats([]), "acme", partitions=bad)


def test_an_older_hubs_health_reads_as_one_partition_held_by_nobody() -> None:
    older = health_result()
    health = Health.model_validate(older)
    assert (health.partitions, health.held) == (1, [])
    newer = Health.model_validate(health_result(partitions=16, held=[(3, 7)]))
    assert (newer.partitions, newer.held) == (16, [HeldPartition(partition=3, epoch=7)])
    for bad in ({"partitions": 0}, {"partitions": MAX_PARTITIONS + 1}, {"held": [{"partition": -1, "epoch": 0}]}):
        with pytest.raises(ValidationError):
            Health.model_validate({**older, **bad})
