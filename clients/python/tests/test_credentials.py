"""Credentials as the TypeScript client reads and writes them (conformance/fixtures/credentials.json, checked on the
TypeScript side by packages/client/test/conformance-credentials.test.ts): reply-inbox prefix, agent id and expiry from
a JWT, `.creds` files in the standard format at 0600, identity keys that sign what the server checks, renewal timing."""

from __future__ import annotations

import asyncio
import base64
import json
import stat
import time
from pathlib import Path
from typing import Any

import nacl.signing
import pytest

from ag2net import HubClient
from ag2net.credentials import (
    CredentialsError,
    UserCredentials,
    agent_id_of,
    create_identity_keys,
    expires_at_of,
    format_creds,
    inbox_prefix_of,
    load_creds,
    parse_creds,
    public_key_of,
    read_creds_file,
    sign_nonce,
    write_creds_file,
)
from ag2net.identity import EXPIRY_MARGIN, issued_identity, usable_credentials
from ag2net.renewal import CredentialLifetime, renewal_delay, run_renewal

from .conftest import fixture

FIXTURE: dict[str, Any] = fixture("credentials.json")


def unsigned_jwt(claims: dict[str, Any]) -> str:
    """A JWT with `claims` as its payload: the client reads claims without checking signatures."""

    def part(value: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")

    return f"{part({'typ': 'JWT'})}.{part(claims)}.c2ln"


def test_inbox_prefix_agent_id_and_expiry_of_each_fixture_jwt() -> None:
    cases = FIXTURE["jwts"]
    assert len(cases) == 6
    for case in cases:
        assert (inbox_prefix_of(case["jwt"]), agent_id_of(case["jwt"]), expires_at_of(case["jwt"])) == (
            case["inbox_prefix"],
            case["agent_id"],
            case["expires_at"],
        )


@pytest.mark.parametrize("jwt", FIXTURE["invalid_jwts"])
def test_what_is_not_a_user_jwt_is_refused(jwt: str) -> None:
    with pytest.raises(CredentialsError):
        inbox_prefix_of(jwt)


def test_fixture_creds_files_parse_to_their_jwt_and_seed_and_keys_match() -> None:
    for case in FIXTURE["creds_files"]:
        assert parse_creds(case["text"]) == UserCredentials(jwt=case["jwt"], seed=case["seed"])
    for text in FIXTURE["invalid_creds_files"]:
        with pytest.raises(CredentialsError):
            parse_creds(text)
    for key in FIXTURE["keys"]:
        assert public_key_of(key["seed"]) == key["public_key"]
    # The Python file is byte for byte the TypeScript client's.
    first = FIXTURE["creds_files"][0]
    assert format_creds(UserCredentials(jwt=first["jwt"], seed=first["seed"])) == first["text"]


def test_fresh_identity_keys_sign_what_their_public_key_verifies() -> None:
    keys = create_identity_keys()
    assert (keys.public_key[0], len(keys.public_key), keys.seed[:2], public_key_of(keys.seed)) == (
        "U",
        56,
        "SU",
        keys.public_key,
    )
    assert create_identity_keys().public_key != keys.public_key
    raw = base64.b32decode(keys.public_key + "=" * (-len(keys.public_key) % 8))[1:33]
    signature = base64.b64decode(sign_nonce(keys.seed, "nonce-1"))
    assert nacl.signing.VerifyKey(raw).verify(b"nonce-1", signature) == b"nonce-1"


def test_creds_files_are_written_0600_and_read_back(tmp_path: Path) -> None:
    keys = create_identity_keys()
    creds = UserCredentials(jwt=FIXTURE["jwts"][0]["jwt"], seed=keys.seed)
    path = tmp_path / "a.creds"
    assert read_creds_file(path) is None
    write_creds_file(path, creds)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert (read_creds_file(path), load_creds(path), load_creds(str(path)), load_creds(format_creds(creds))) == (
        creds,
        creds,
        creds,
        creds,
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.creds"]
    (tmp_path / "b.creds").write_text("garbage", encoding="utf-8")
    with pytest.raises(CredentialsError):
        read_creds_file(tmp_path / "b.creds")
    with pytest.raises(CredentialsError):
        load_creds(tmp_path / "missing.creds")


def test_issued_credentials_are_persisted_before_use_and_expired_ones_are_not_reused(tmp_path: Path) -> None:
    keys = create_identity_keys()
    live = unsigned_jwt({"sub": keys.public_key, "name": "a1", "iat": 100, "exp": 99999999999})
    result = {
        "passport": {"name": "a", "agent_id": "a1"},
        "credentials": {"jwt": live, "expires_at": "5138-11-16T09:46:39.000Z", "inbox_prefix": "_INBOX_a1"},
    }
    path = tmp_path / "a.creds"
    grant = issued_identity(result, seed=keys.seed, creds_path=path)
    assert grant.credentials is not None
    assert (grant.credentials.inbox_prefix, grant.credentials.lifetime) == (
        "_INBOX_a1",
        CredentialLifetime(issued_at=100, expires_at=99999999999),
    )
    assert read_creds_file(path) == UserCredentials(jwt=live, seed=keys.seed)
    assert usable_credentials(UserCredentials(jwt=live, seed=keys.seed), path) is not None
    lapsing = unsigned_jwt({"sub": "U1", "name": "a1", "exp": int(time.time() + EXPIRY_MARGIN - 1)})
    assert usable_credentials(UserCredentials(jwt=lapsing, seed=keys.seed), path) is None
    unsecured = {"passport": {"name": "a", "agent_id": "a1"}, "credentials": None}
    assert issued_identity(unsecured, seed=keys.seed, creds_path=None).credentials is None


def test_renewal_is_due_at_two_thirds_of_the_lifetime() -> None:
    lifetime = CredentialLifetime(issued_at=1000.0, expires_at=1003.0)
    assert [renewal_delay(now, lifetime) for now in (1000.0, 1001.5, 1002.0, 1005.0)] == [2.0, 0.5, 0.0, 0.0]


async def test_a_failing_renewal_is_retried_until_it_succeeds_then_runs_on_the_new_lifetime() -> None:
    clock = [0.0]
    calls: list[float] = []
    renewed = asyncio.Event()

    async def renew() -> float:
        calls.append(clock[0])
        if len(calls) < 3:
            raise RuntimeError("no hub")
        renewed.set()
        return clock[0] + 1000.0

    task = asyncio.create_task(
        run_renewal(CredentialLifetime(issued_at=-0.3, expires_at=0.15), renew, who="a", now=lambda: clock[0])
    )
    await asyncio.wait_for(renewed.wait(), timeout=5)
    task.cancel()
    assert len(calls) == 3


async def test_renewal_gives_up_once_the_credentials_expired() -> None:
    calls: list[int] = []

    async def renew() -> float:
        calls.append(1)
        raise RuntimeError("no hub")

    times = iter([0.0, 0.0, 0.0, 10.0, 10.0, 10.0])
    await asyncio.wait_for(
        run_renewal(CredentialLifetime(issued_at=-3.0, expires_at=1.0), renew, who="a", now=lambda: next(times)),
        timeout=5,
    )
    assert len(calls) == 2


async def test_connect_takes_a_jwt_only_with_its_seed() -> None:
    with pytest.raises(TypeError, match=r"^HubClient\.connect: jwt and seed go together$"):
        await HubClient.connect("nats://127.0.0.1:1", jwt=FIXTURE["jwts"][0]["jwt"])
    with pytest.raises(CredentialsError):
        await HubClient.connect("nats://127.0.0.1:1", creds="-----BEGIN NATS USER JWT----- but nothing else")
