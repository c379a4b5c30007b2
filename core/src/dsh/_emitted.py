"""What ``Session.emit`` returns: awaiting it tells the async ``session_event``
observers of the event (with none, it is already done). A plain ``def`` hook impl
cannot await, and Python's own warning for a dropped coroutine would name only dsh's
internals; dropped unawaited, this says which event the async observers missed and
what to do. It says so with no async observer installed too, so that the mistake shows
in a plugin's own tests and not first with a user's async observer."""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Generator
from typing import Any, final

from dsh._ready import READY
from dsh._secrets import get_logger

__all__ = ["EmitNotAwaitedWarning", "Emitted"]

log = get_logger("dsh.session")


class EmitNotAwaitedWarning(RuntimeWarning):
    """``session.emit(...)`` was not awaited: async observers never saw the event."""


@final
class Emitted:
    __slots__ = ("_pending", "_said")

    def __init__(self, pending: Awaitable[None], type: str, seq: int) -> None:
        self._pending: Awaitable[None] | None = pending
        self._said = (type, seq)

    def __await__(self) -> Generator[Any, None, None]:
        pending, self._pending = self._pending, None
        if pending is None:
            raise RuntimeError("what session.emit returned was awaited already")
        return pending.__await__()

    def __del__(self) -> None:
        pending, self._pending = self._pending, None
        if pending is None:
            return
        close = getattr(pending, "close", None)
        if close is not None:
            close()  # Python's own warning would name only the dispatcher's coroutine
        type, seq = self._said
        if pending is READY:  # no async observer missed it, this time
            said = (
                f"session.emit({type!r}) (event seq {seq}) was not awaited: the event is "
                "logged, but an async session_event observer, once one is installed, will "
                "never see it; await what emit returns (in an async def impl)"
            )
        else:
            said = (
                f"session.emit({type!r}) (event seq {seq}) was not awaited: the event is "
                "logged, but the async session_event observers never saw it; await what "
                "emit returns (in an async def impl)"
            )
            log.error("%s", said)
        warnings.warn(said, EmitNotAwaitedWarning, stacklevel=2)
