"""How often a failing turn runs again, as `TurnAttempts` of @ag2net/client: backoff from 1 s, doubling, at most 60 s,
up to `max_attempts` runs; the count of the latest 10,000 failing deliveries is remembered. A turn whose handler
raised a final wire error (`is_final_error`) does not run again: no retry can change the hub's answer."""

from __future__ import annotations

from collections import OrderedDict

DEFAULT_MAX_TURN_ATTEMPTS = 5
#: Delay before the second attempt of a failed turn, in seconds; doubled for every further attempt.
DEFAULT_TURN_RETRY_BACKOFF = 1.0
#: Longest delay between two attempts of a failed turn, in seconds.
MAX_TURN_RETRY_DELAY = 60.0
#: Failing deliveries whose count is remembered.
_CAPACITY = 10_000


class TurnAttempts:
    """Counts the failed attempts of each delivery (by envelope id), to bound the redelivery of a failing handler."""

    def __init__(
        self,
        max_attempts: int = DEFAULT_MAX_TURN_ATTEMPTS,
        backoff: float = DEFAULT_TURN_RETRY_BACKOFF,
        capacity: int = _CAPACITY,
    ) -> None:
        self._max_attempts = max_attempts
        self._backoff = backoff
        self._capacity = capacity
        self._failures: OrderedDict[str, int] = OrderedDict()

    def fail(self, envelope_id: str, *, final: bool = False) -> tuple[int, float | None]:
        """Records one more failed attempt: the attempts so far and the delay before the next one in seconds, or
        `None` when there is none (the last allowed attempt, or a `final` failure); the count is then forgotten."""
        attempts = self._failures.pop(envelope_id, 0) + 1
        if final or attempts >= self._max_attempts:
            return attempts, None
        self._failures[envelope_id] = attempts
        if len(self._failures) > self._capacity:
            self._failures.popitem(last=False)
        return attempts, min(self._backoff * 2 ** (attempts - 1), MAX_TURN_RETRY_DELAY)

    def settled(self, envelope_id: str) -> None:
        """The delivery succeeded: forget its count."""
        self._failures.pop(envelope_id, None)

    def count(self, envelope_id: str) -> int:
        """Failed attempts recorded for `envelope_id`."""
        return self._failures.get(envelope_id, 0)
