"""``READY``: an awaitable that is already done, for hot paths with nothing to await."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Final, cast, final

__all__ = ["READY"]


@final
class _Ready(tuple[()]):
    """``__await__`` is the (C) tuple iterator of an empty tuple, so awaiting it runs no
    Python frame and creates no coroutine."""

    __slots__ = ()
    __await__ = tuple.__iter__


#: Returned instead of a coroutine when there is nothing to do (a session event with no
#: async observer, a notification or flush with no impls); callers may compare against
#: it to skip the await.
READY: Final = cast("Awaitable[None]", _Ready())
