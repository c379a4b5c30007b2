"""``AgentHandle``: the owner's grip on a live agent (send, prompt, watch, dispose).
Public as ``dsh.agent.AgentHandle``; ``harness.agents`` (``dsh._agents``) makes them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Coroutine, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import TYPE_CHECKING, Any, final

import anyio
import anyio.lowlevel

from dsh._grace import current, within
from dsh.errors import DshError

if TYPE_CHECKING:
    from anyio.streams.memory import MemoryObjectReceiveStream

    from dsh._agents import AgentRegistry
    from dsh.hookspecs import AgentStatus
    from dsh.loop import ReactLoopAgent
    from dsh.session import Session, SessionEvent
    from dsh.turns import TurnResult

__all__ = ["AgentHandle"]

#: The handle whose ``agent_created`` observers the calling task tells, or a task they
#: started, inherits (``telling_created``): not every task under the creating one.
_creating: ContextVar[AgentHandle | None] = ContextVar("dsh_creating", default=None)


@final
class AgentHandle:
    """The owner's grip on a live agent. ``dispose()`` is idempotent and safe to call
    concurrently: every caller awaits the same teardown (stop the loop, await quiescence,
    unregister, remove the session), except one the teardown itself waits for (the
    agent's own hooks: see ``dispose``)."""

    __slots__ = ("_done", "_registry", "_telling", "agent")

    def __init__(self, agent: ReactLoopAgent, registry: AgentRegistry) -> None:
        self.agent = agent
        self._registry = registry
        self._done: anyio.Event | None = None
        # While the agent_created observers of the agent's start are told: the id of the
        # task telling them, and what is set once they have returned.
        self._telling: tuple[int, anyio.Event] | None = None

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
        (``max_steps``, ``queue_mode``: the next turn); a bad core option ends the turn
        ``error``."""
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
        """Send ``text``, wait until the turn that took it has ended (and been flushed),
        and return that turn. Prompts others send meanwhile run in later turns, which it
        does not wait for (``when_idle()`` does).

        A failed turn is returned, not raised (``result.reason == "error"``; call
        ``result.raise_for_error()`` to raise it). A ``DshError`` says the prompt was
        dropped (``cancel()``, or the agent disposed) before a turn took it.

        Cancelling the wait (a time limit around it) cancels the prompt: taken back if
        it is still queued, else the turn that took it is aborted (with the prompts
        batched into it), unless that turn has ended; other turns are left alone."""
        from dsh.inbox import Prompt, check_prompt
        from dsh.turns import turns

        check_prompt(text)  # before it is made a Prompt: prompt(42) is not "42"
        # An object of its own: the queue entry of this very prompt, told apart from an
        # equal prompt sent by someone else (for one character too)
        mine = Prompt(text)
        start = len(self.session.events)
        self.agent.send_awaited(mine)
        try:
            await self.agent.when_done(mine)
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
        if number is not None:  # the loop task failed in it (reported: agent_error)
            raise DshError(f"agent {self.id!r}: turn {number} failed in the agent loop")
        raise DshError(f"agent {self.id!r}: the prompt was dropped before a turn took it")

    @asynccontextmanager
    async def events(self) -> AsyncIterator[MemoryObjectReceiveStream[SessionEvent]]:
        """The agent's session events from now on, as they are logged: ``async with
        agent.events() as events:`` then ``async for event in events``. Events wait for
        the reader (the stream is unbounded, so the agent never does); leaving the block
        stops the watch. The stream ends when the agent is disposed, after its last
        event. Several readers may watch one agent."""
        from dsh._watch import event_watch

        harness = self._registry.harness
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
        """Stop the agent (a turn running ends ``disposed``), flush its session, forget
        it, tell the ``agent_disposed`` observers, and return once all that is done.

        Awaited in one of the agent's own hook impls (``agent_status``, ``session_event``,
        ``session_flush``, ``agent_created``, ``agent_disposed`` ... of this agent, or a
        task started in a task group such an impl opened), which the disposal waits
        for, it begins the disposal and returns at once: the rest is done once that impl
        has returned (a turn's flush included)."""
        if self._done is None:
            self._done = anyio.Event()
            self.agent.begin_stop()  # now, so a turn ending meanwhile ends ``disposed``
            self._registry.start_teardown(self._teardown, self._done)
        if self._waits_for_caller():
            # a tool or an interception hook stops here, as the turn is being cut short
            # (a no-op in a shielded notification or flush)
            await anyio.lowlevel.checkpoint_if_cancelled()
        else:
            await self._done.wait()

    async def _teardown(self, done: anyio.Event) -> None:
        """Stop the agent, flush its session, forget it and tell the ``agent_disposed``
        observers (after its ``agent_created`` ones), then set ``done``."""
        agent = self.agent
        agent.grace.enter()  # what stop() starts bounds the flush and the observers here
        # Shielded: an outer cancellation (a timeout around the harness) must not cut
        # the final flush short; the loop itself still stops, as begin_stop() asked.
        with anyio.CancelScope(shield=True):
            try:
                await agent.stop()
                await agent.flush()
            finally:
                self._registry.forget(self)
                await self.created()  # agent_disposed comes after agent_created
                await agent.relay.agent_disposed(agent)
                agent.grace.leave()
                done.set()

    @contextmanager
    def telling_created(self) -> Iterator[None]:
        """Around the ``agent_created`` observers of the agent's start (``dsh._agents``):
        a ``dispose()`` from them returns at once, ``created()`` waits for them, and the
        agent's grace bounds them once it is disposed (they hold up its teardown)."""
        self._telling = telling = (anyio.get_current_task().id, anyio.Event())
        token = _creating.set(self)
        try:
            with within(self.agent.grace):
                yield
        finally:
            _creating.reset(token)
            self._telling = None
            telling[1].set()

    async def created(self) -> None:
        """Return once the ``agent_created`` observers of the agent's start have (the
        teardown tells ``agent_disposed`` after them)."""
        telling = self._telling
        if telling is not None:
            await telling[1].wait()

    def _waits_for_caller(self) -> bool:
        """Whether the disposal waits for the calling task: the agent's loop task or its
        teardown (``Grace.tasks``), or the task telling the ``agent_created`` observers,
        or a task started in a task group one of them has open. Cheap unless the caller
        runs in the agent's grace (its hooks) or its ``agent_created`` observers."""
        grace = self.agent.grace
        waiting = grace.tasks if current() is grace else ()
        if self._telling is not None and _creating.get() is self:
            waiting += (self._telling[0],)
        return bool(waiting) and _runs_under(waiting)


def _runs_under(tasks: tuple[int, ...]) -> bool:
    """Whether the calling task is one of ``tasks`` (ids), or was started in a task group
    that one of them, or a task under one of them, has open (and so waits for)."""
    me = anyio.get_current_task()
    if me.id in tasks:
        return True
    parents = {task.id: task.parent_id for task in anyio.get_running_tasks()}
    parent = me.parent_id
    while parent is not None:
        if parent in tasks:
            return True
        parent = parents.get(parent)
    return False
