"""Resuming a stored session: loading it through the persistence service, and seeding
the session (and, when the caller gives none, the options) of the agent that continues
it. ``harness.agents.resume``, ``load_stored`` and ``resume_stored`` use these."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from dsh.errors import DshError

if TYPE_CHECKING:
    from dsh._relay import HookRelay
    from dsh.harness import Harness
    from dsh.persistence import StoredSession
    from dsh.session import Session, SessionStore

__all__ = ["load_session", "resumed_session"]


async def load_session(
    relay: HookRelay,
    session_id: str,
    harness: Harness | None = None,
    env: Mapping[str, str] | None = None,
) -> StoredSession:
    """The stored session ``session_id`` from the persistence service ``relay`` finds;
    DshError saying why there is none (no persistence plugin loaded: naming the switch
    that left it out of ``harness``, read from ``env``; or the session is not stored)."""
    persistence = await relay.session_persistence()
    if persistence is None:
        from dsh._no_store import STORE, no_store

        if harness is not None:  # names the switch that left persistence out
            why = no_store(harness.pm, env, cli=False)
        else:
            why = f"install dsh-persistence, or enable it with select=[{STORE!r}]"
        raise DshError(
            f"cannot resume session {session_id!r}: no persistence plugin is loaded ({why})"
        )
    stored = await persistence.load(session_id)
    if stored is None:
        raise DshError(f"cannot resume session {session_id!r}: it is not stored")
    return stored


def resumed_session(
    sessions: SessionStore,
    stored: StoredSession,
    options: dict[str, Any] | None,
    harness: Harness | None = None,
) -> tuple[Session, dict[str, Any] | None]:
    """The session an agent continuing ``stored`` gets (its events, meta and creation
    time), and its options: ``options``, or without them the ones the session was
    created with (stored in its meta when they were JSON; those for a plugin of
    ``harness`` that does not run now are warned about)."""
    session = sessions.prepare(
        stored.id, stored.events, meta=dict(stored.meta), created=stored.created
    )
    if options is None and isinstance(stored.meta.get("options"), dict):
        options = dict(stored.meta["options"])
        if harness is not None:
            from dsh._code_options import warn_left_out

            warn_left_out(harness, stored.id, options)
    return session, options
