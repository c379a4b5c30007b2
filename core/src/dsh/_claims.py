"""A session is its agent's until the agent is disposed: the claim taken for it.

A persistence service may reserve the sessions of this process's agents (``claim`` and
``release``, optional; dsh-persistence locks the session's file): a session another
process writes is then refused as its agent is created or resumed, before any model call,
instead of both processes running turns on it and the later save failing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from dsh._relay import HookRelay
    from dsh.session import Session, SessionEvent

__all__ = ["claimable", "claimed"]


@asynccontextmanager
async def claimed(relay: HookRelay, session: Session) -> AsyncIterator[None]:
    """Claim ``session`` (its log so far: the store must still end where it does) from
    the persistence service, if it claims; released again if the block fails (the agent
    could not start). The plugin ends the claim when the agent is disposed."""
    persistence: Any = await relay.session_persistence()
    if not (hasattr(persistence, "claim") and hasattr(persistence, "release")):
        yield
        return
    await persistence.claim(session.id, session.events)
    try:
        yield
    except BaseException:
        with anyio.CancelScope(shield=True), suppress(Exception):  # the first error counts
            await persistence.release(session.id)
        raise


async def claimable(relay: HookRelay, session_id: str, events: Sequence[SessionEvent]) -> None:
    """Raise what resuming ``session_id`` (its log so far ``events``) would when its
    claim is taken (``SessionInUseError``: another process continues it), resuming
    nothing: the claim is taken and let go at once. For a command that checks what its
    first input would hit, with no input to act on (``dsh chat --continue < /dev/null``)."""
    persistence: Any = await relay.session_persistence()
    if not (hasattr(persistence, "claim") and hasattr(persistence, "release")):
        return
    await persistence.claim(session_id, events)
    with anyio.CancelScope(shield=True):
        await persistence.release(session_id)
