"""What an ``AgentRegistry`` (``dsh._agents``) has in flight, and calling it off.

A start is reserved under its agent id and its session's until it is live or refused,
so that a second start of either cannot begin while the first awaits (the session's
claim, the ``agent_created`` observers). When the harness leaves (``close``), the starts
and store reads in flight are called off and awaited before its plugins stop; from then
on nothing starts.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio

from dsh.errors import DshError, SessionInUseError

if TYPE_CHECKING:
    from dsh._handle import AgentHandle
    from dsh.session import SessionStore

__all__ = ["InFlight"]


class InFlight:
    """The starts and store reads in flight of one registry, whose ``live`` agents and
    ``sessions`` a new start must not take; ``closed``: why none may start any more
    (the harness is leaving), else None."""

    def __init__(
        self, live: Mapping[str, AgentHandle], sessions: SessionStore, starts_agents: bool
    ) -> None:
        self._live = live
        self._sessions = sessions
        self._starts_agents = starts_agents
        self._starting: dict[str, str] = {}  # the starts in flight: agent id -> session id
        # their scopes (and the loads'), called off by close; ``_drained`` is set when the
        # last of them ends
        self._scopes: set[anyio.CancelScope] = set()
        self._drained: anyio.Event | None = None
        self.closed: str | None = None

    @asynccontextmanager
    async def reserved(self, agent_id: str, session_id: str) -> AsyncIterator[None]:
        """Reserve ``agent_id`` and its session until the block ends: the start is in
        flight (claiming the session awaits, in a thread for a store on disk, and a second
        start of the id or the session must not begin in between). ``close`` calls it off:
        a ``DshError`` saying the harness is stopping."""
        self._refuse_start(agent_id, session_id)
        self._starting[agent_id] = session_id
        try:
            async with self.called_off(lambda: self.refuse_if_closed(agent_id)):
                yield
        finally:
            del self._starting[agent_id]

    @asynccontextmanager
    async def called_off(self, refuse: Callable[[], None]) -> AsyncIterator[None]:
        """Run the block until it ends or ``close`` calls it off: ``refuse`` raises then
        (the harness is stopping). ``close`` waits for it."""
        scope = anyio.CancelScope()
        self._scopes.add(scope)
        try:
            with scope:
                yield
        finally:
            self._scopes.discard(scope)
            if not self._scopes and self._drained is not None:
                self._drained.set()
        if scope.cancelled_caught:  # called off by close()
            refuse()

    async def close(self) -> None:
        """Nothing starts from now on; what is in flight is called off and awaited."""
        self.closed = "is stopping"
        for scope in list(self._scopes):
            scope.cancel()
        while self._scopes:
            self._drained = anyio.Event()
            await self._drained.wait()

    def mark_stopped(self) -> None:
        self.closed = "has stopped"

    def refuse_if_closed(self, agent_id: str) -> None:
        if self.closed is not None:
            raise DshError(f"agent {agent_id!r}: the harness {self.closed}")

    def _refuse_start(self, agent_id: str, sid: str) -> None:
        if not self._starts_agents:  # its config was read leniently: nothing may run
            reason = "settings for plugins that do not run were only warned about"
            raise DshError(f"agent {agent_id!r}: this harness starts no agent ({reason})")
        self.refuse_if_closed(agent_id)
        if agent_id in self._live or agent_id in self._starting:
            raise DshError(f"agent {agent_id!r} already exists; dispose it first")
        # said before the claim is tried (which would blame another process)
        if self._sessions.get(sid) is not None:
            live = self._live.values()
            owner = "".join(f" (agent {h.id!r})" for h in live if h.session.id == sid)
            where = "it is already live in this harness"
        else:
            starting = [a for a, s in self._starting.items() if s == sid]
            if not starting:
                return
            owner = f" (agent {starting[0]!r})"
            where = "it is being resumed or created in this harness"
        raise SessionInUseError(  # as when another process holds it: one error to catch
            f"agent {agent_id!r}: session {sid!r} is in use: {where}{owner}; "
            "dispose that agent first"
        )
