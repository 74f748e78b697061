"""How a deployment spreads its channels over partitions, each owned by one hub instance at a time (`partitions.ts` of
@ag2net/protocol).

A client computes a channel's partition itself (`partition_of`) and sends the channel's operations to that
partition's subject (`HubNames.rpc_in`), which only the partition's owner subscribes to. The deployment's partition
count is in every hub's `Health.partitions`. conformance/fixtures/partitions.json holds the hashes, partitions, routes
and subjects every client must agree on.
"""

from __future__ import annotations

from typing import Literal

#: The most partitions a deployment can have.
MAX_PARTITIONS = 256

#: FNV-1a, 32 bits: offset basis and prime.
_FNV_OFFSET_BASIS = 2166136261
_FNV_PRIME = 16777619
_U32 = 0xFFFFFFFF

#: Where an operation is served: one channel's partition, every partition, or the home partition (partition 0).
Route = Literal["channel", "scattered", "home"]

#: The operations about one channel (their request names it in `channel_id`): sent to the channel's partition. A
#: `createChannel` sent to a partitioned deployment must carry the `channel_id` the client minted.
PARTITIONED_OPS: frozenset[str] = frozenset(
    {
        "createChannel",
        "getChannel",
        "closeChannel",
        "post",
        "readWal",
        "findEnvelopeByCausation",
        "canSend",
        "adapterState",
        "reportTurnFailure",
        "acquireTurnLock",
        "renewTurnLock",
        "releaseTurnLock",
    }
)

#: The operations each partition answers for its own channels: a client of a partitioned deployment asks every
#: partition and joins the answers (`listChannels` page by page, partition after partition).
SCATTERED_OPS: frozenset[str] = frozenset({"listChannels", "pendingTurnsFor", "deliveryLag"})


def fnv1a32(text: str) -> int:
    """FNV-1a (32 bits) of `text` encoded as UTF-8, as an unsigned integer."""
    value = _FNV_OFFSET_BASIS
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * _FNV_PRIME) & _U32
    return value


def check_partitions(partitions: int) -> int:
    """`partitions` when it is a partition count (an integer from 1 to `MAX_PARTITIONS`); `ValueError` otherwise."""
    if isinstance(partitions, bool) or not isinstance(partitions, int) or not 1 <= partitions <= MAX_PARTITIONS:
        raise ValueError(f"partitions must be an integer from 1 to {MAX_PARTITIONS}, not {partitions!r}")
    return partitions


def partition_of(channel_id: str, partitions: int) -> int:
    """The partition of channel `channel_id` in a deployment of `partitions` partitions:
    `fnv1a32(utf8(channel_id)) mod partitions`."""
    return 0 if check_partitions(partitions) == 1 else fnv1a32(channel_id) % partitions


def route_of(op: str) -> Route:
    """Where operation `op` is served: `channel` (its channel's partition), `scattered` (every partition, each for its
    own channels) or `home` (the home partition, on today's subjects)."""
    if op in PARTITIONED_OPS:
        return "channel"
    if op in SCATTERED_OPS:
        return "scattered"
    return "home"
