"""User callbacks may be plain functions or coroutine functions: the client awaits what a call returns only when it
is awaitable. A plain function runs on the event loop, so it must return quickly (hand slow work to
`asyncio.to_thread`)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable

#: What a user callback returns: nothing (a plain function) or an awaitable (an `async def`).
MaybeAwaitable = Awaitable[None] | None


async def settle(result: MaybeAwaitable) -> None:
    """Awaits what a callback returned when it is awaitable (its exception propagates); a plain return is done."""
    if inspect.isawaitable(result):
        await result
