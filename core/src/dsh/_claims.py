"""A session is its agent's until the agent is disposed: the claim taken for it.

A persistence service may reserve the sessions of this process's agents (``claim`` and
``release``, optional; dsh-persistence locks the session's file): a session another
process writes is then refused as its agent is created or resumed, before any model call,
instead of both processes running turns on it and the later save failing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

if TYPE_CHECKING:
    from dsh._relay import HookRelay
    from dsh.harness import Harness
    from dsh.session import Session, SessionEvent

__all__ = ["Claim", "claimable", "claimed"]


class Claim:
    """What ``claimed`` yields. The start sets ``ended`` once its agent, live, has been
    disposed: the plugin ended the claim then (``agent_disposed``), so it is not
    released again (the claims may be the process's: that release could end the claim
    another harness took on the session meanwhile)."""

    __slots__ = ("ended",)

    def __init__(self) -> None:
        self.ended = False


@asynccontextmanager
async def claimed(
    relay: HookRelay,
    session: Session,
    check: Callable[[], None] = lambda: None,
    harness: Harness | None = None,
) -> AsyncIterator[Claim]:
    """Claim ``session`` (its log so far: the store must still end where it does) from
    the persistence service of ``harness`` (the session's), if it claims; released again
    if the block fails (the agent could not start), unless the block ended it
    (``Claim.ended``). The plugin ends the claim when the agent is disposed.

    ``check`` raises when the agent may no longer start (the harness is leaving): called
    after each await, before the claim (nothing taken) and after it (then released)."""
    persistence: Any = await relay.session_persistence(harness)
    check()
    claim = Claim()
    if not (hasattr(persistence, "claim") and hasattr(persistence, "release")):
        yield claim
        return
    # A claim that raises took nothing: not released (the claims may be the process's,
    # shared by its harnesses: a release would end another's). Cancelled, it holds
    # nothing either: anyio starts no worker thread for a cancelled caller, and one that
    # asyncio's own cancellation stopped waiting for is the service's to let go.
    await persistence.claim(session.id, session.events)
    try:
        # a cancellation that came while the claim ran (in its thread, which returns
        # normally) is delivered here, the claim held: it is let go below
        await anyio.lowlevel.checkpoint_if_cancelled()
        check()
        yield claim
    except BaseException:
        if not claim.ended:
            await _release(persistence, session.id)
        raise


async def _release(persistence: Any, session_id: str) -> None:
    with anyio.CancelScope(shield=True), suppress(Exception):  # the first error counts
        await persistence.release(session_id)


async def claimable(
    relay: HookRelay,
    session_id: str,
    events: Sequence[SessionEvent],
    harness: Harness | None = None,
) -> None:
    """Raise what resuming ``session_id`` (its log so far ``events``) in ``harness``
    would when its claim is taken (``SessionInUseError``: another process continues
    it), resuming nothing: the claim is taken and let go at once. For a command that
    checks what its first input would hit, with no input to act on (``dsh chat
    --continue < /dev/null``)."""
    persistence: Any = await relay.session_persistence(harness)
    if not (hasattr(persistence, "claim") and hasattr(persistence, "release")):
        return
    await persistence.claim(session_id, events)
    with anyio.CancelScope(shield=True):
        await persistence.release(session_id)
