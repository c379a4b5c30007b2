"""Agents: the ``Agent`` protocol hooks receive, handles, and the registry/factory."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Coroutine, Mapping
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, final, runtime_checkable

import anyio

from dsh._claims import claimed
from dsh._options import storable_options
from dsh._resume import load_session, resumed_session
from dsh.errors import DshError
from dsh.loop import ReactLoopAgent

if TYPE_CHECKING:
    from anyio.abc import TaskGroup
    from anyio.streams.memory import MemoryObjectReceiveStream

    from dsh._relay import HookRelay
    from dsh.harness import Harness
    from dsh.hookspecs import AgentStatus
    from dsh.llm.registry import ModelRegistry
    from dsh.persistence import StoredSession
    from dsh.session import Session, SessionEvent, SessionStore
    from dsh.tools import ToolRegistry
    from dsh.turns import TurnResult

__all__ = ["Agent", "AgentHandle", "AgentRegistry"]


@runtime_checkable
class Agent(Protocol):
    """What a hook impl may rely on about the agent it is called for."""

    @property
    def id(self) -> str: ...

    @property
    def session(self) -> Session: ...

    @property
    def status(self) -> AgentStatus: ...

    @property
    def options(self) -> dict[str, Any]: ...

    @property
    def harness(self) -> Harness | None:
        """The owning harness: ``harness.config.section(name)``, ``.models``, ``.tools``."""

    @property
    def relay(self) -> HookRelay:
        """Typed calls of every hook, and ``call_*`` for a plugin's own hooks."""

    def send(self, prompt: str) -> None: ...

    def steer(self, prompt: str) -> None: ...

    def abort(self) -> None: ...

    def cancel(self) -> None: ...

    async def when_idle(self) -> None: ...


@final
class AgentHandle:
    """The owner's grip on a live agent. ``dispose()`` is idempotent and safe to call
    concurrently: every caller awaits the same teardown (stop the loop, await quiescence,
    unregister, remove the session)."""

    __slots__ = ("_done", "_registry", "agent")

    def __init__(self, agent: ReactLoopAgent, registry: AgentRegistry) -> None:
        self.agent = agent
        self._registry = registry
        self._done: anyio.Event | None = None

    @property
    def id(self) -> str:
        return self.agent.id

    @property
    def session(self) -> Session:
        """The agent's session: its event log (``events``) and derived ``history``."""
        return self.agent.session

    @property
    def status(self) -> AgentStatus:
        """``idle``, ``running`` or ``disposed``."""
        return self.agent.status

    @property
    def options(self) -> dict[str, Any]:
        """The agent's options (``model``, ``system_prompt``, plugins' settings, yours),
        read by each step and each plugin call: a change applies from the next one
        (``max_steps``: the next turn); a bad core option ends the turn ``error``."""
        return self.agent.options

    def send(self, prompt: str) -> None:
        """Queue ``prompt``; it starts a turn when the agent is free. Prompts queued while
        a turn runs are taken together by the next turn (one turn each with the option
        ``queue_mode: one-at-a-time``). Returns at once: see ``prompt()`` to wait."""
        self.agent.send(prompt)

    def steer(self, prompt: str) -> None:
        """Give ``prompt`` to the running turn at its next step (logged as a
        ``steering/message``); left over when the turn ends, it starts the next one."""
        self.agent.steer(prompt)

    def abort(self) -> None:
        """Stop the step in flight (the model's stream, or a tool); the turn ends
        ``aborted`` and prompts already queued still run afterwards. A turn whose outcome
        is settled (it failed, or its last step is ending it) ends as it would have."""
        self.agent.abort()

    def cancel(self) -> None:
        """``abort()``, and drop every queued and steering prompt too, one sent but not
        yet started included. On an idle agent with nothing queued, nothing happens."""
        self.agent.cancel()

    def when_idle(self) -> Coroutine[Any, Any, None]:
        """Wait until the agent has nothing left to do (every queued prompt answered)."""
        return self.agent.when_idle()

    async def prompt(self, text: str) -> TurnResult:
        """Send ``text``, wait until the agent is idle, and return the turn that took it.

        A failed turn is returned, not raised (``result.reason == "error"``; call
        ``result.raise_for_error()`` to raise it). A ``DshError`` says the prompt was
        dropped (``cancel()``, or the agent disposed) before a turn took it.

        Cancelling the wait (a time limit around it) cancels the prompt: taken back if
        it is still queued, else the turn that took it is aborted (with the prompts
        batched into it), unless that turn has ended; other turns are left alone."""
        from dsh.inbox import Prompt
        from dsh.turns import turns

        # An object of its own: the queue entry of this very prompt, told apart from an
        # equal prompt sent by someone else (for one character too)
        mine = Prompt(text)
        start = len(self.session.events)
        self.agent.send_awaited(mine)
        try:
            await self.when_idle()
        except BaseException:
            if not self.agent.withdraw(mine) and self.agent.is_running(mine):
                self.agent.abort()  # the turn that took it (a dropped prompt: none)
            self.agent.taken_by(mine)
            raise
        number = self.agent.taken_by(mine)
        for result in turns(self.session.events[start:]):
            if result.turn == number:
                unsaved = self.agent.unsaved.get(result.turn)
                if unsaved is not None:
                    said = str(unsaved) if isinstance(unsaved, DshError) else repr(unsaved)
                    result = replace(result, save_error=said)
                return result
        raise DshError(f"agent {self.id!r}: the prompt was dropped before a turn took it")

    @asynccontextmanager
    async def events(self) -> AsyncIterator[MemoryObjectReceiveStream[SessionEvent]]:
        """The agent's session events from now on, as they are logged: ``async with
        agent.events() as events:`` then ``async for event in events``. Events wait for
        the reader (the stream is unbounded, so the agent never does); leaving the block
        stops the watch. The stream ends when the agent is disposed, after its last
        event. Several readers may watch one agent."""
        from dsh._watch import event_watch

        harness = self._registry._harness
        if harness is None:
            raise DshError(f"agent {self.id!r} has no harness to watch its events through")
        watch = event_watch(harness.pm)
        received = watch.watch(self.session.id)
        if self.agent.status == "disposed":  # no event will come: the stream ends now
            watch.end(self.session.id)
        try:
            yield received
        finally:
            watch.unwatch(self.session.id, received)

    async def dispose(self) -> None:
        if self._done is None:
            self._done = anyio.Event()
            self.agent.begin_stop()  # now, so a turn ending meanwhile ends ``disposed``
            # The teardown runs in the harness's task group, so a caller that is cancelled
            # while waiting cannot leave it half done for the others.
            self._registry._task_group.start_soon(self._teardown, self._done)
        await self._done.wait()

    async def _teardown(self, done: anyio.Event) -> None:
        agent = self.agent
        # Shielded: an outer cancellation (a timeout around the harness) must not cut
        # the final flush short; the loop itself still stops, as begin_stop() asked.
        with anyio.CancelScope(shield=True):
            try:
                await agent.stop()
                await agent.flush()
            finally:
                self._registry._forget(self)
                await agent.relay.agent_disposed(agent)
                done.set()


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
        self._starts_agents = starts_agents
        self._workspace = workspace
        self._harness = harness
        self._relay = relay
        self._sessions = sessions
        self._models = models
        self._tools = tools
        self._live: dict[str, AgentHandle] = {}
        self._starting: set[str] = set()  # ids whose agent is being created or resumed
        self._closed: str | None = None  # why no agent may start: the harness is leaving

    def get(self, agent_id: str) -> AgentHandle | None:
        return self._live.get(agent_id)

    def list(self) -> list[AgentHandle]:
        return list(self._live.values())

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
        path is taken from the harness's."""
        if source == "create" and self._harness is not None:
            from dsh._code_options import check_options

            check_options(self._harness, agent_id, options)
        place = self._place(agent_id, workspace)
        sid = session_id or f"{agent_id}-session-{uuid.uuid4().hex}"
        meta = dict(meta or {})
        meta.setdefault("agent", agent_id)  # who created it: a resume finds its settings
        if options and "options" not in meta:
            meta["options"] = storable_options(agent_id, options)  # a resume rebuilds them
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
        JSON and so stored in the session's meta). ``workspace`` as for ``create``."""
        self._refuse_if_closed(agent_id)  # before the store is read: it may be closing
        return await self.resume_stored(
            agent_id, await self.load_stored(resume_session_id), options, workspace=workspace
        )

    async def resume_stored(
        self,
        agent_id: str,
        stored: StoredSession,
        options: dict[str, Any] | None = None,
        *,
        workspace: str | os.PathLike[str] | None = None,
    ) -> AgentHandle:
        """``resume`` of a session already loaded with ``load_stored`` (which a caller
        that checks a session before it lets go of anything has done): not read again."""
        if self._harness is not None:
            from dsh._code_options import check_options

            check_options(self._harness, agent_id, options, resumed=True)
        place = self._place(agent_id, workspace)
        session, options = resumed_session(self._sessions, stored, options, self._harness)
        return await self._start(agent_id, session, options, "resume", place)

    async def load_stored(self, session_id: str) -> StoredSession:
        """The stored session ``resume`` would continue; DshError saying why there is
        none (no persistence plugin loaded, or the session is not stored)."""
        return await load_session(self._relay, session_id, self._harness, self._env)

    def _place(self, agent_id: str, workspace: str | os.PathLike[str] | None) -> Path | None:
        """An agent's own workspace, resolved from the harness's; an existing directory."""
        if workspace is None:
            return self._workspace
        place = Path(self._workspace or Path.cwd(), workspace).resolve()
        if not place.is_dir():
            raise DshError(f"agent {agent_id!r}: workspace {str(place)!r} is not a directory")
        return place

    async def _start(
        self,
        agent_id: str,
        session: Session,
        options: dict[str, Any] | None,
        source: Literal["startup", "create", "resume"],
        workspace: Path | None = None,
    ) -> AgentHandle:
        if not self._starts_agents:  # its config was read leniently: nothing may run
            reason = "settings for plugins that do not run were only warned about"
            raise DshError(f"agent {agent_id!r}: this harness starts no agent ({reason})")
        self._refuse_if_closed(agent_id)
        if agent_id in self._live or agent_id in self._starting:
            raise DshError(f"agent {agent_id!r} already exists; dispose it first")
        sid = session.id
        if self._sessions.get(sid) is not None:  # said before the claim is tried
            owner = "".join(f" (agent {h.id!r})" for h in self.list() if h.session.id == sid)
            raise DshError(
                f"agent {agent_id!r}: session {sid!r} is in use: it is already live in this "
                f"harness{owner}; dispose that agent first"
            )
        # reserved until it is live: claiming the session awaits (in a thread, for a
        # store on disk), and a second create of the id must not start in between
        self._starting.add(agent_id)
        try:
            async with claimed(self._relay, session):
                return await self._started(agent_id, session, options, source, workspace)
        finally:
            self._starting.discard(agent_id)

    async def _started(
        self,
        agent_id: str,
        session: Session,
        options: dict[str, Any] | None,
        source: Literal["startup", "create", "resume"],
        workspace: Path | None,
    ) -> AgentHandle:
        self._refuse_if_closed(agent_id)  # the harness began to leave while it was claimed
        if not (options or {}).get("model") and self._harness is not None:
            default = self._harness.config.default_model  # `model:` at the top of dsh.yml
            if default:
                options = {**(options or {}), "model": default}
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
        self._sessions.enter(session)
        try:
            self._task_group.start_soon(agent.run, name=f"dsh agent {agent_id}")
        except BaseException:  # registered nowhere, then
            self._sessions.remove(session)
            raise
        handle = AgentHandle(agent, self)
        self._live[agent_id] = handle
        await self._relay.agent_created(agent, source)
        return handle

    def _close(self, state: Literal["is stopping", "has stopped"]) -> None:
        self._closed = state  # the harness is leaving: no agent starts any more

    def _refuse_if_closed(self, agent_id: str) -> None:
        if self._closed is not None:
            raise DshError(f"agent {agent_id!r}: the harness {self._closed}")

    def _forget(self, handle: AgentHandle) -> None:
        if self._live.get(handle.id) is handle:
            del self._live[handle.id]
        self._sessions.remove(handle.session)

    async def dispose_all(self) -> None:
        async with anyio.create_task_group() as tg:
            for handle in self.list():
                tg.start_soon(handle.dispose)
