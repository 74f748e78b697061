"""conformance/fixtures/error-codes.json on the Python side: every code with its scope, retryability, HTTP status and
exit code, and the code of each error class both clients have (the TypeScript side is
packages/protocol/test/error-codes.test.ts and packages/client/test/conformance-error-codes.test.ts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import ag2net
from ag2net import (
    ERROR_CODE_INFO,
    ERROR_CODES,
    Ag2netError,
    CredentialsError,
    EnvelopeTimeoutError,
    ExitCode,
    HubError,
    PassportError,
    PostAck,
    UnknownHubError,
    error_from_wire,
    exit_code_of,
    http_status_of,
    is_final_error,
    is_retryable_code,
)
from ag2net.errors import RETRYABLE_ERROR_CODES, WIRE_ERROR_CODES, NetworkError, UnknownNetworkError

from .conftest import fixture

DATA: dict[str, Any] = fixture("error-codes.json")
SCHEMAS = Path(__file__).resolve().parents[3] / "docs" / "schemas"


def test_the_codes_are_the_fixtures_in_its_order_with_the_same_meaning() -> None:
    ours = [
        {
            "code": code,
            "scope": info.scope,
            "retryable": info.retryable,
            "http_status": info.http_status,
            "exit_code": int(info.exit_code),
        }
        for code, info in ERROR_CODE_INFO.items()
    ]
    assert ours == DATA["codes"]
    assert list(ERROR_CODES) == [c["code"] for c in DATA["codes"]]


@pytest.mark.parametrize("case", DATA["codes"], ids=lambda c: str(c["code"]))
def test_each_code_maps_to_its_retryability_http_status_and_exit_code(case: dict[str, Any]) -> None:
    code = case["code"]
    assert (is_retryable_code(code), http_status_of(code), exit_code_of(code)) == (
        case["retryable"],
        case["http_status"],
        case["exit_code"],
    )
    local = Ag2netError("x")
    local.code = code
    assert local.retryable is case["retryable"]


def test_a_code_this_version_does_not_know_is_treated_like_internal() -> None:
    unknown = DATA["unknown"]
    assert (is_retryable_code(unknown["code"]), http_status_of(unknown["code"]), exit_code_of(unknown["code"])) == (
        unknown["retryable"],
        unknown["http_status"],
        unknown["exit_code"],
    )
    err = error_from_wire({"code": "timeout", "message": "a hub never says this"})
    assert isinstance(err, UnknownHubError)
    assert (err.code, err.retryable) == ("timeout", False)


def test_the_exit_codes_are_numbered_as_the_fixture_says() -> None:
    assert {e.name.lower(): int(e) for e in ExitCode} == DATA["exit_codes"]


def test_only_the_wire_codes_have_the_wire_scope_and_only_unavailable_is_retried_among_them() -> None:
    assert [c["code"] for c in DATA["codes"] if c["scope"] == "wire"] == list(WIRE_ERROR_CODES)
    assert [c["code"] for c in DATA["codes"] if c["scope"] == "wire" and c["retryable"]] == list(RETRYABLE_ERROR_CODES)


@pytest.mark.parametrize("case", DATA["classes"], ids=lambda c: str(c["name"]))
def test_each_class_of_the_fixture_has_its_code_and_is_an_ag2net_error(case: dict[str, Any]) -> None:
    cls = getattr(ag2net, case["name"])
    assert issubclass(cls, Ag2netError)
    err = cls("x")
    expected = (case["name"], case["code"], is_retryable_code(case["code"]), case["hub_error"])
    assert (type(err).__name__, err.code, err.retryable, isinstance(err, HubError)) == expected
    if case["hub_error"]:
        assert error_from_wire(err.to_wire()).code == err.code
    else:
        assert not is_final_error(err)


def test_python_only_errors_are_ag2net_errors_and_keep_their_builtin_base() -> None:
    passport = PassportError("invalid passport: name")
    assert isinstance(passport, ValueError)
    assert (passport.code, passport.retryable) == ("invalid_request", False)
    timeout = EnvelopeTimeoutError("no matching envelope within 1 s")
    assert isinstance(timeout, TimeoutError)
    assert isinstance(CredentialsError("not a JWT"), Ag2netError)


def test_the_former_names_are_the_same_classes() -> None:
    assert NetworkError is HubError
    assert UnknownNetworkError is UnknownHubError


def test_post_ack_has_the_fields_of_the_post_response_schema() -> None:
    schema = json.loads((SCHEMAS / "rpc" / "post.response.schema.json").read_text(encoding="utf-8"))
    assert set(PostAck.model_fields) == set(schema["properties"])
    assert {n for n, f in PostAck.model_fields.items() if f.is_required()} == set(schema["required"])
