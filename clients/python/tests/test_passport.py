"""A passport is checked before it is sent: a field it does not have, a missing name or a wrong type raise
`PassportError` naming the valid fields, and nothing reaches the hub."""

from __future__ import annotations

import pytest

from ag2net import PassportError
from ag2net.passport import check_passport

from .fakes import AnsweringNats, hub_on

FIELDS = (
    "its fields are: name (required), owner, provider, model, cost, region, auth, kind, hub_id, version, agent_id, "
    "created_at"
)


def test_a_complete_passport_passes() -> None:
    check_passport(
        {
            "name": "scholar",
            "owner": "research",
            "provider": "openai",
            "model": "gpt-4o",
            "cost": {"input_per_mtok": 2.5, "output_per_mtok": 10, "latency_tier": "fast"},
            "region": "eu",
            "auth": {"scheme": "api_key", "claim": {"token": "k"}},
            "kind": "agent",
            "hub_id": None,
            "version": 1,
            "agent_id": "01J0000000000000000000000A",
            "created_at": "",
        }
    )


@pytest.mark.parametrize(
    ("passport", "message"),
    [
        ({"name": "a", "description": "x"}, f"passport has no field 'description'; {FIELDS}"),
        ({"name": "a", "x": 1, "api_key": "k"}, f"passport has no fields 'api_key', 'x'; {FIELDS}"),
        (
            {"name": "a", "auth": {"token": "k"}},
            "passport['auth'] has no field 'token'; its fields are: scheme, issuer, audience, key_fingerprint, claim"
            ' (an API key: {"scheme": "api_key", "claim": {"token": "<key>"}})',
        ),
        (
            {"name": "a", "cost": {"usd": 1}},
            "passport['cost'] has no field 'usd'; its fields are: input_per_mtok, output_per_mtok, latency_tier",
        ),
        ({"owner": "x"}, f"invalid passport: passport['name']: Field required; {FIELDS}"),
        (
            {"name": "a", "kind": "robot"},
            f"invalid passport: passport['kind']: Input should be 'agent', 'human' or 'remote_agent'; {FIELDS}",
        ),
    ],
    ids=["unknown field", "unknown fields", "unknown auth field", "unknown cost field", "no name", "wrong kind"],
)
def test_a_wrong_passport_names_the_problem_and_the_valid_fields(passport: dict[str, object], message: str) -> None:
    with pytest.raises(PassportError) as caught:
        check_passport(passport)
    assert str(caught.value) == message
    assert isinstance(caught.value, ValueError)


async def test_register_and_attach_send_nothing_for_a_wrong_passport() -> None:
    nc = AnsweringNats({})
    hub = await hub_on(nc)
    with pytest.raises(PassportError, match=r"^passport has no field 'descripton'; "):
        await hub.register({"name": "a", "descripton": "typo"})
    with pytest.raises(PassportError, match=r"^passport has no field 'descripton'; "):
        await hub.register_human({"name": "p", "descripton": "typo"})
    with pytest.raises(PassportError, match=r"^passport\['auth'\] has no field 'token'; "):
        await hub.attach("a", passport={"auth": {"token": "k"}})
    with pytest.raises(PassportError, match=r"^passport has no field 'descripton'; "):
        await hub.attach_human("p", passport={"descripton": "typo"})
    assert nc.requests == []
