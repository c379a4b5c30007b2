"""``AgentRegistry`` (``harness.agents``): creates, resumes, finds and owns agents.

Public as ``dsh.agent.AgentRegistry``. Starting an agent is reserved under its id (and
its session's) until it is live or refused (``dsh._in_flight``): the checks, the
session's claim, then going live and telling the ``agent_created`` observers. A start
that fails once its agent is live disposes it (its normal teardown, which ends the
claim); the harness leaving calls off the starts and store reads in flight (``close``)
and waits for them before its plugins stop.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Coroutine, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio

from dsh._arg_types import check_args, plain
from dsh._claims import Claim, claimed
from dsh._handle import AgentHandle
from dsh._ids import check_id
from dsh._in_flight import InFlight
from dsh._json import copied
from dsh._options import check_core_options, storable_options
from dsh._resume import forked, load_session, log_events, resumed_session, sound
from dsh._stored_meta import check_meta, declared_secrets_of, held_secrets, hidden_meta
from dsh.errors import DshError
from dsh.loop import ReactLoopAgent

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from dsh._relay import HookRelay
    from dsh.harness import Harness
    from dsh.llm.registry import ModelRegistry
    from dsh.persistence import StoredSession
    from dsh.session import Session, SessionEvent, SessionStore
    from dsh.tools import ToolRegistry

__all__ = ["AgentRegistry"]


class AgentRegistry:
    """Creates, resumes, finds and owns agents (``harness.agents``)."""

    def __init__(
        self,
        *,
        task_group: TaskGroup,
        relay: HookRelay,
        sessions: SessionStore,
        models: ModelRegistry,
        tools: ToolRegistry,
        workspace: Path | None = None,
        harness: Harness | None = None,
        env: Mapping[str, str] | None = None,
        starts_agents: bool = True,
    ) -> None:
        # env: the harness's, for the switch that left persistence out (load_stored)
        self._task_group = task_group
        self._env = env
        self._workspace = workspace
        self._harness = harness
        self._relay = relay
        self._sessions = sessions
        self._models = models
        self._tools = tools
        self._live: dict[str, AgentHandle] = {}
        self._in_flight = InFlight(self._live, sessions, starts_agents)

    def get(self, agent_id: str) -> AgentHandle | None:
        return self._live.get(agent_id)

    def list(self) -> list[AgentHandle]:
        return list(self._live.values())

    @property
    def harness(self) -> Harness | None:
        """The harness the agents run in (None: a registry made without one); what an
        ``AgentHandle`` watches its events through."""
        return self._harness

    def start_teardown(
        self, teardown: Callable[[anyio.Event], Coroutine[Any, Any, None]], done: anyio.Event
    ) -> None:
        """For ``AgentHandle.dispose``, once per handle: its ``teardown`` runs in the
        harness's task group, so that a caller cancelled while waiting cannot leave it
        half done for the others."""
        self._task_group.start_soon(teardown, done)

    async def create(
        self,
        agent_id: str,
        session_id: str | None = None,
        meta: dict[str, Any] | None = None,
        options: dict[str, Any] | None = None,
        *,
        source: Literal["startup", "create"] = "create",
        workspace: str | os.PathLike[str] | None = None,
    ) -> AgentHandle:
        """A new agent on a new session (``"{agent_id}-session-{uuid}"`` by default).

        ``options`` are checked as ``dsh.yml``'s ``agents[].options`` are: a bad core
        option, a bad value for a plugin's settings, or a key that is a typo of either
        is a ``DshError`` before anything starts. ``workspace``: the directory this agent
        works in (its file tools and commands), instead of the harness's; a relative
        path is taken from the harness's. Either id may not be empty, start with ``-``
        or hold a control character (``dsh._ids``). An argument of the wrong type is a
        ``TypeError`` naming it; a ``meta`` that is not lossless JSON (it is stored with
        the session) a ``DshError`` naming the place in it."""
        check_args(
            "agents.create",
            agent_id=agent_id,
            session_id=session_id,
            meta=meta,
            options=options,
            workspace=workspace,
        )
        agent_id, session_id = plain(agent_id), plain(session_id)  # what stores keep
        check_meta(meta, "agents.create(meta=...): ")
        check_id("agent id", agent_id)
        if session_id is not None:
            check_id(f"agent {agent_id!r}: session id", session_id)
        if source == "create" and self._harness is not None:
            from dsh._code_options import check_options

            check_options(self._harness, agent_id, options)
        place = self._place(agent_id, workspace)
        sid = session_id or f"{agent_id}-session-{uuid.uuid4().hex}"
        meta = copied(meta) if meta else {}  # a caller changing its dict later: not ours
        meta.setdefault("agent", agent_id)  # who created it: a resume finds its settings
        if options and "options" not in meta:
            meta["options"] = storable_options(agent_id, options)  # a resume rebuilds them
        harness = self._harness
        meta = hidden_meta(agent_id, meta, held_secrets(harness), declared_secrets_of(harness))
        session = self._sessions.prepare(sid, meta=meta)
        return await self._start(agent_id, session, options, source, place)

    async def resume(
        self,
        agent_id: str,
        resume_session_id: str,
        options: dict[str, Any] | None = None,
        *,
        workspace: str | os.PathLike[str] | None = None,
    ) -> AgentHandle:
        """An agent continuing a stored session; needs a persistence plugin. Without
        ``options`` the agent gets the options it was created with (when they were
        JSON and so stored in the session's meta), checked as ``create`` checks its own:
        a bad one is a ``DshError`` naming the session and ``options=``, which replaces
        them. ``workspace`` and arguments of the wrong type as for ``create``."""
        check_args(
            "agents.resume",
            agent_id=agent_id,
            resume_session_id=resume_session_id,
            options=options,
            workspace=workspace,
        )
        agent_id, resume_session_id = plain(agent_id), plain(resume_session_id)
        refuse = self._in_flight.refuse_if_closed
        refuse(agent_id)  # before the store is read: it may be closing
        place = self._checked(agent_id, options, workspace)  # before the id, as create
        async with self._in_flight.reserved(agent_id, resume_session_id):  # the read included
            stored = await load_session(
                self._relay,
                resume_session_id,
                self._harness,
                self._env,
                check=lambda: refuse(agent_id),
            )
            refuse(agent_id)
            return await self._resume(agent_id, stored, options, place)

    async def resume_stored(
        self,
        agent_id: str,
        stored: StoredSession,
        options: dict[str, Any] | None = None,
        *,
        workspace: str | os.PathLike[str] | None = None,
    ) -> AgentHandle:
        """``resume`` of a session already loaded with ``load_stored`` (which a caller
        that checks a session before it lets go of anything has done): not read again.
        Arguments of the wrong type as for ``resume`` (``stored`` takes a
        ``StoredSession``)."""
        check_args(
            "agents.resume_stored",
            agent_id=agent_id,
            stored=stored,
            options=options,
            workspace=workspace,
        )
        agent_id = plain(agent_id)
        place = self._checked(agent_id, options, workspace, stored)
        async with self._in_flight.reserved(agent_id, stored.id):
            return await self._resume(agent_id, stored, options, place)

    async def fork(
        self,
        agent_id: str,
        session_id: str,
        turns: int,
        new_session_id: str | None = None,
        options: dict[str, Any] | None = None,
        *,
        workspace: str | os.PathLike[str] | None = None,
    ) -> AgentHandle:
        """``resume`` of a copy of stored session ``session_id`` up to the end of its
        turn ``turns``, as a new session (``new_session_id``: one not stored yet)."""
        check_args(
            "agents.fork",
            required=("session_id",),
            agent_id=agent_id,
            session_id=session_id,
            turns=turns,
            new_session_id=new_session_id,
            options=options,
            workspace=workspace,
        )
        agent_id, new_session_id = plain(agent_id), plain(new_session_id)
        stored = await self.load_stored(session_id)
        new_id = new_session_id or f"{agent_id}-session-{uuid.uuid4().hex}"
        check_id(f"agent {agent_id!r}: session id", new_id)
        copy = await forked(self.load_stored, self._sessions, stored, new_id, turns)
        return await self.resume_stored(agent_id, copy, options, workspace=workspace)

    async def load_stored(self, session_id: str) -> StoredSession:
        """The stored session ``resume`` would continue (a last turn left open closed:
        ``dsh._resume.sound``'s closers appended, which the resumed session logs through
        its observer as it goes live); DshError saying why there is none (no persistence plugin
        loaded, or the session is not stored, or its log breaks the invariants, or the
        harness is leaving); a ``session_id`` that is not a str, a ``TypeError``. The exit
        awaits a load in flight (called off if it has not read the store yet)."""
        check_args("agents.load_stored", required=("session_id",), session_id=session_id)
        session_id = plain(session_id)

        def refuse() -> None:
            if (closed := self._in_flight.closed) is not None:
                raise DshError(f"cannot load session {session_id!r}: the harness {closed}")

        refuse()  # before the store is read: it may be closed
        async with self._in_flight.called_off(refuse):
            stored = await load_session(
                self._relay, session_id, self._harness, self._env, check=refuse
            )
        return sound(stored)

    async def close(self) -> None:
        """The harness is leaving: no agent starts from now on (a create or resume is a
        ``DshError`` saying the harness is stopping). Starts in flight are called off
        (refused, their agent disposed and their claim let go if they got that far) and
        awaited, so that nothing opens a store after the plugins have closed theirs; so
        are the ``load_stored`` in flight."""
        await self._in_flight.close()

    def mark_stopped(self) -> None:
        """The harness has stopped: a create or resume now says so."""
        self._in_flight.mark_stopped()

    async def dispose_all(self) -> None:
        async with anyio.create_task_group() as tg:
            for handle in self.list():
                tg.start_soon(handle.dispose)

    def _place(self, agent_id: str, workspace: str | os.PathLike[str] | None) -> Path | None:
        """An agent's own workspace, resolved from the harness's; an existing directory."""
        if workspace is None:
            return self._workspace
        place = Path(self._workspace or Path.cwd(), workspace).resolve()
        if not place.is_dir():
            raise DshError(f"agent {agent_id!r}: workspace {str(place)!r} is not a directory")
        return place

    def _checked(
        self,
        agent_id: str,
        options: dict[str, Any] | None,
        workspace: str | os.PathLike[str] | None,
        stored: StoredSession | None = None,
    ) -> Path | None:
        """A resume's options checked (``stored``: the session, when read already), and
        its workspace (``_place``)."""
        if self._harness is not None:
            from dsh._code_options import check_options

            check_options(self._harness, agent_id, options, resumed=True, stored=stored)
        return self._place(agent_id, workspace)

    async def _resume(
        self,
        agent_id: str,
        stored: StoredSession,
        options: dict[str, Any] | None,
        place: Path | None,
    ) -> AgentHandle:
        session, options, logged = resumed_session(
            self._sessions, stored, options, self._harness, agent_id=agent_id
        )
        return await self._claim_and_go(agent_id, session, options, "resume", place, logged)

    async def _start(
        self,
        agent_id: str,
        session: Session,
        options: dict[str, Any] | None,
        source: Literal["startup", "create", "resume"],
        workspace: Path | None = None,
    ) -> AgentHandle:
        async with self._in_flight.reserved(agent_id, session.id):
            return await self._claim_and_go(agent_id, session, options, source, workspace)

    async def _claim_and_go(
        self,
        agent_id: str,
        session: Session,
        options: dict[str, Any] | None,
        source: Literal["startup", "create", "resume"],
        workspace: Path | None,
        logged: Sequence[SessionEvent] = (),
    ) -> AgentHandle:
        # the harness may begin to leave at each await: checked after every one
        refuse = self._in_flight.refuse_if_closed
        async with claimed(self._relay, session, lambda: refuse(agent_id), self._harness) as claim:
            go = (agent_id, session, options, source, workspace, claim)
            return await self._started(*go, logged)

    async def _started(
        self,
        agent_id: str,
        session: Session,
        options: dict[str, Any] | None,
        source: Literal["startup", "create", "resume"],
        workspace: Path | None,
        claim: Claim,
        logged: Sequence[SessionEvent],
    ) -> AgentHandle:
        # the harness may have begun to leave while it was claimed
        self._in_flight.refuse_if_closed(agent_id)
        if not (options or {}).get("model") and self._harness is not None:
            default = self._harness.config.default_model  # `model:` at the top of dsh.yml
            if default:
                options = {**(options or {}), "model": default}
        check_core_options(agent_id, dict(options or {}))  # before anything is logged
        self._sessions.enter(session)
        try:
            # a fork's seed and the closers of a last turn the store returned open
            # (``sound``), told to the session's observer now that it is live, before
            # the agent reads its log (its turns) and the loop can start a turn
            await log_events(session, logged)
            agent = ReactLoopAgent(
                agent_id,
                session,
                relay=self._relay,
                models=self._models,
                tools=self._tools,
                options=options,
                workspace=workspace,
                harness=self._harness,
            )
            self._task_group.start_soon(agent.run, name=f"dsh agent {agent_id}")
        except BaseException:  # registered nowhere, then
            self._sessions.remove(session)
            raise
        handle = AgentHandle(agent, self)
        self._live[agent_id] = handle
        try:
            # a failing observer is reported (a notification); this fails when the
            # caller is cancelled meanwhile (or the harness leaves): the start then
            # leaves nothing behind, its claim never let go while the agent could
            # still run a turn: its teardown ends it (agent_disposed), once
            with handle.telling_created():  # a teardown meanwhile waits for it
                await self._relay.agent_created(agent, source)
        except BaseException:
            with anyio.CancelScope(shield=True):
                await handle.dispose()
            claim.ended = True
            raise
        return handle

    def forget(self, handle: AgentHandle) -> None:
        """Unregister ``handle`` and remove its session (its teardown, ``dsh._handle``)."""
        if self._live.get(handle.id) is handle:
            del self._live[handle.id]
        self._sessions.remove(handle.session)
