"""NATS user credentials as the TypeScript client reads and writes them: JWT claims, identity keys, `.creds` files."""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import nkeys
from pydantic import BaseModel, ConfigDict, ValidationError

from .errors import Ag2netError

#: The reply-inbox prefix of a connection without credentials, or whose credentials allow any subscription.
DEFAULT_INBOX_PREFIX = "_INBOX"
_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
_PREFIX_RE = re.compile(r"^(_[A-Za-z0-9_-]+)\.>$")
_CREDS_BLOCK = re.compile(
    r"-{3,}BEGIN NATS USER JWT-{3,}\s+(\S+)\s+-{3,}END NATS USER JWT-{3,}[\s\S]*?"
    r"-{3,}BEGIN USER NKEY SEED-{3,}\s+(\S+)\s+-{3,}END USER NKEY SEED-{3,}"
)


class CredentialsError(Ag2netError):
    """Credentials that are not a user JWT, or not a `.creds` file. Code `invalid_config`. Local, never on the wire."""

    code = "invalid_config"


@dataclass(frozen=True)
class UserCredentials:
    """A user JWT and the seed of the nkey it was issued for: what a NATS connection authenticates with."""

    jwt: str
    seed: str


@dataclass(frozen=True)
class IdentityKeys:
    """A fresh nkey user pair: the public key (`U…`) goes to the hub, the seed (`SU…`) never leaves this process."""

    public_key: str
    seed: str


class _Allow(BaseModel):
    model_config = ConfigDict(extra="allow")
    allow: list[str] | None = None


class _NatsClaims(BaseModel):
    model_config = ConfigDict(extra="allow")
    sub: _Allow | None = None


class UserClaims(BaseModel):
    """The claims of a NATS user JWT the client reads (`exp` and `iat` in seconds since the epoch); others pass."""

    model_config = ConfigDict(extra="allow")
    sub: str
    name: str | None = None
    iat: float | None = None
    exp: float | None = None
    nats: _NatsClaims | None = None


def decode_user_claims(jwt: str) -> UserClaims:
    """The claims of a user JWT, decoded without checking its signature. Safe because the client only reads what it
    was given for itself (its reply-inbox prefix, its expiry, its agent id): nats-server verifies the JWT when the
    connection authenticates and enforces its permissions, so a wrong claim read here can only make this client's own
    requests fail, never grant anything."""
    parts = jwt.split(".")
    if len(parts) < 2:
        raise CredentialsError("not a JWT: no payload part")
    payload = parts[1]
    try:
        data = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (ValueError, binascii.Error) as err:
        raise CredentialsError("not a JWT: the payload is not base64url JSON") from err
    try:
        return UserClaims.model_validate(data)
    except ValidationError as err:
        raise CredentialsError("not a user JWT") from err


def inbox_prefix_of(jwt: str) -> str:
    """The reply-inbox prefix a user JWT allows: the `X` of its subscribe permission `X.>` (an identity's
    `_INBOX_<id>`, the registrant's `_REGISTRANT_INBOX_<prefix>`); `_INBOX` when the JWT lets the user subscribe
    anywhere. Requests on a connection whose prefix the server denies never see their replies, so the prefix always
    comes from the credentials."""
    claims = decode_user_claims(jwt)
    allow = (claims.nats.sub.allow if claims.nats is not None and claims.nats.sub is not None else None) or []
    if not allow or ">" in allow or f"{DEFAULT_INBOX_PREFIX}.>" in allow:
        return DEFAULT_INBOX_PREFIX
    for subject in allow:
        m = _PREFIX_RE.match(subject)
        if m is not None:
            return m.group(1)
    return DEFAULT_INBOX_PREFIX


def agent_id_of(jwt: str) -> str | None:
    """The agent id a hub-issued identity JWT is for (its `name` claim), or `None` when it names none."""
    name = decode_user_claims(jwt).name
    return name if name is not None and _ID_RE.match(name) else None


def expires_at_of(jwt: str) -> float | None:
    """When a user JWT stops being accepted, in seconds since the epoch; `None` when it does not expire."""
    return decode_user_claims(jwt).exp


def create_identity_keys() -> IdentityKeys:
    """A fresh nkey user pair."""
    seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
    return IdentityKeys(public_key=public_key_of(bytes(seed).decode()), seed=bytes(seed).decode())


def public_key_of(seed: str) -> str:
    """The public key (`U…`) of a user seed."""
    try:
        pair = nkeys.from_seed(bytearray(seed.strip().encode()))
    except nkeys.NkeysError as err:
        raise CredentialsError("not an nkey seed") from err
    return bytes(pair.public_key).decode()


def sign_nonce(seed: str, nonce: str) -> bytes:
    """The server's connect nonce signed with `seed`, base64 (what a NATS CONNECT carries as `sig`)."""
    pair = nkeys.from_seed(bytearray(seed.strip().encode()))
    return base64.b64encode(bytes(pair.sign(nonce.encode())))


def format_creds(credentials: UserCredentials) -> str:
    """A standard `.creds` file of a user JWT and its seed (the format every NATS client and the `nats` tool read)."""
    return "\n".join(
        [
            "-----BEGIN NATS USER JWT-----",
            credentials.jwt,
            "------END NATS USER JWT------",
            "",
            "************************* IMPORTANT *************************",
            "NKEY Seed printed below can be used to sign and prove identity.",
            "NKEYs are sensitive and should be treated as secrets.",
            "",
            "-----BEGIN USER NKEY SEED-----",
            credentials.seed.strip(),
            "------END USER NKEY SEED------",
            "",
            "*************************************************************",
            "",
        ]
    )


def parse_creds(text: str) -> UserCredentials:
    """The JWT and seed of a `.creds` file's text; `CredentialsError` when it is not one."""
    m = _CREDS_BLOCK.search(text)
    if m is None:
        raise CredentialsError("not a .creds file")
    return UserCredentials(jwt=m.group(1), seed=m.group(2))


def load_creds(text_or_path: str | Path) -> UserCredentials:
    """`.creds` text, or the path of a `.creds` file, as credentials."""
    if isinstance(text_or_path, str) and "BEGIN NATS USER JWT" in text_or_path:
        return parse_creds(text_or_path)
    found = read_creds_file(text_or_path)
    if found is None:
        raise CredentialsError(f"cannot read the credentials file {text_or_path}")
    return found


def read_creds_file(path: str | Path) -> UserCredentials | None:
    """The credentials persisted at `path`, or `None` when there is no such file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as err:
        raise CredentialsError(f"cannot read the credentials file {path}") from err
    try:
        return parse_creds(text)
    except CredentialsError as err:
        raise CredentialsError(f"{path} is not a .creds file") from err


def write_creds_file(path: str | Path, credentials: UserCredentials) -> None:
    """Persists credentials at `path` as a `.creds` file readable by its owner only (0600). The file is written beside
    and renamed into place, so a reader (another replica, the next start) never sees half a file."""
    target = Path(path)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        os.fchmod(f.fileno(), 0o600)
        f.write(format_creds(credentials))
    os.replace(tmp, target)
