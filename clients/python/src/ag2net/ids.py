"""Ids: fresh envelope and channel ids (ULIDs), and the deterministic reply id shared with every ag2net client."""

from __future__ import annotations

import hashlib
import os
import time

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_MAX_ID_LENGTH = 128


def new_id() -> str:
    """A fresh ULID: 48 bits of milliseconds, then 80 random bits, in Crockford base32 (26 characters)."""
    value = (int(time.time() * 1000) << 80) | int.from_bytes(os.urandom(10), "big")
    return "".join(_CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def reply_envelope_id(agent_id: str, trigger_envelope_id: str) -> str:
    """The envelope id of agent `agent_id`'s answer to `trigger_envelope_id`, as the TypeScript client derives it.

    `r-<trigger>-<agent>` when the agent id holds no `-` and the result fits 128 characters, otherwise `rh-` and the
    hex SHA-256 of `<trigger>\\n<agent>`. Every attempt and every replica (in any language) derives the same id, so
    the hub admits the answer once; the hub reserves these ids for that (agent, trigger) pair.
    """
    readable = f"r-{trigger_envelope_id}-{agent_id}"
    if "-" not in agent_id and len(readable) <= _MAX_ID_LENGTH:
        return readable
    digest = hashlib.sha256(f"{trigger_envelope_id}\n{agent_id}".encode()).hexdigest()
    return f"rh-{digest}"


def is_reply_form_id(envelope_id: str) -> bool:
    """True when `envelope_id` has a reply id's reserved form (`r-…` or `rh-…`)."""
    return envelope_id.startswith(("r-", "rh-"))
