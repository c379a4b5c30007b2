"""``ReactLoopAgent``: the agent loop — the only concrete loop logic in dsh.

One task per agent parks on its inbox; each batch of queued prompts becomes a turn of
steps (request → stream → tools → continuation). ``_steps`` runs a turn; the
behaviours it keeps are tested by number in tests/core/test_behaviours_*.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsh._grace import Grace
from dsh._options import check_core_options, queue_mode
from dsh._secrets import get_logger
from dsh._steps import StepRunner
from dsh._stray import failed
from dsh._turn_state import TurnState
from dsh._wakeup import Signal, event_class
from dsh.errors import AgentDisposedError
from dsh.inbox import Inbox, check_prompt

if TYPE_CHECKING:
    from dsh._relay import HookRelay
    from dsh.harness import Harness
    from dsh.hookspecs import AgentStatus
    from dsh.llm.registry import ModelRegistry
    from dsh.session import Session
    from dsh.tools import ToolRegistry

__all__ = ["AgentDisposedError", "ReactLoopAgent"]

log = get_logger("dsh.loop")
FAILURES_IN_A_ROW = 3  #: loop-task failures with no turn ending between: disposed
_UNSAVED_KEPT = 8


class ReactLoopAgent:
    """An agent: an inbox, a session and a loop task that turns prompts into turns.

    ``options``: ``model`` (registered model name), ``system_prompt``, ``max_steps``
    (default 50), ``queue_mode`` (``batch`` | ``one-at-a-time``), ``max_tokens``; other
    keys are free for plugins.
    """

    def __init__(
        self,
        id: str,
        session: Session,
        *,
        relay: HookRelay,
        models: ModelRegistry,
        tools: ToolRegistry,
        options: dict[str, Any] | None = None,
        workspace: Path | None = None,
        harness: Harness | None = None,
    ) -> None:
        self.id = id
        #: The harness that owns the agent (its config, registries, other agents); None
        #: for an agent built without one.
        self.harness = harness
        #: The directory file tools are confined to (the harness's workspace).
        self.workspace = workspace or Path.cwd()
        self.session = session
        self.options: dict[str, Any] = dict(options or {})
        check_core_options(id, self.options)
        self.inbox = Inbox()
        self.relay = relay
        #: The harness's registries, for hook impls (the core executor uses ``tools``).
        self.models = models
        self.tools = tools
        self._status: AgentStatus = "idle"
        self._disposing = False
        self._turn: TurnState | None = None
        self._turns = _last_turn(session)
        self._steps = StepRunner(self, models, tools)
        self._event = event_class()
        self._wake = self._event()
        # Created only while someone waits (an idle agent should cost little memory).
        self._idle: Signal | None = None
        # Set at each turn's end (after its flush) and when prompts are dropped, while a
        # ``when_taken_done`` waits.
        self._progress: Signal | None = None
        self._flushed = 0  # the number of the last turn ended and flushed
        self._failures = 0  # the loop task's failures since a turn last ended (_failed)
        self._exited: Signal | None = None
        self._has_exited = False
        self._secrets: tuple[str, ...] | None = None
        #: Turn number -> why the flush after it failed (the last few), for ``prompt()``.
        self.unsaved: dict[int, Exception] = {}
        # id() of each prompt a ``prompt()`` call waits on -> the turn that took it (0:
        # none yet); None while nobody waits (most agents, always).
        self._awaited: dict[int, int] | None = None
        #: Bounds the async hook impls in flight once the agent is aborted, cancelled or
        #: disposed (``dsh._grace``); current in the loop task and the teardown.
        self.grace = Grace()

    # -- the public surface -----------------------------------------------------------

    @property
    def secrets(self) -> tuple[str, ...]:
        """The model API keys' values and the other secrets of the harness (see
        ``dsh._secrets``), hidden from tool results. The harness's are asked for each
        time (it keeps them, renewed as ``Harness.add_secrets`` adds some)."""
        if self.harness is not None:
            return self.harness.secrets()
        if self._secrets is None:
            from dsh._secrets import secret_values

            self._secrets = secret_values(None)
        return self._secrets

    @property
    def status(self) -> AgentStatus:
        return self._status

    @property
    def turns(self) -> int:
        """The number of the last turn started."""
        return self._turns

    def send(self, prompt: str) -> None:
        """Queue ``prompt`` for a coming turn. Returns at once; status is not changed here."""
        self._check_alive(prompt)
        self.inbox.queued.append(prompt)
        self._poke()

    def steer(self, prompt: str) -> None:
        """Add ``prompt`` to the running turn before its next request; idle: like send."""
        self._check_alive(prompt)
        if self._turn is None:
            self.send(prompt)
        else:
            self.inbox.steering.append(prompt)

    def abort(self) -> None:
        """Abort the in-flight step; the turn ends ``aborted`` (unless its outcome is
        settled: see ``TurnState.settled``); queued prompts still run. A flush (or an
        observer) in flight after the turn has ended gets the grace."""
        self._start_grace("abort")
        if self._turn is not None:
            self._turn.abort("aborted")

    def cancel(self) -> None:
        """Abort the running turn and drop everything queued; a no-op when idle and empty."""
        dropped = self.inbox.clear()
        self._start_grace("cancel")
        if self._turn is not None:
            self._turn.cancelled = True
            self._turn.abort("aborted")
        elif dropped:
            self._signal_idle()
        if dropped:
            self._signal_progress()

    def withdraw(self, prompt: str) -> bool:
        """Take back ``prompt`` (the object given to ``send``) if no turn has taken it
        yet; True if it was still queued."""
        queued = self.inbox.queued
        for i, item in enumerate(queued):
            if item is prompt:
                del queued[i]  # an idle loop woken for it finds nothing and parks again
                return True
        return False

    def call_not_run(self, call_id: str) -> None:
        """Say that the tool call being handled has not run and will not: for a
        ``tools_execute`` impl that decides before a call runs (a permission question)
        and is cancelled meanwhile. If the turn ends now, the call's result says it was
        not run, not that it may have run."""
        turn = self._turn
        if turn is not None and turn.running == call_id:
            turn.running = None

    def send_awaited(self, prompt: str) -> None:
        """``send``, remembering which turn takes ``prompt`` (that very object, which the
        caller keeps) for ``taken_by``."""
        self._check_alive(prompt)
        if self._awaited is None:
            self._awaited = {}
        self._awaited[id(prompt)] = 0
        self.send(prompt)

    def taken_by(self, prompt: str) -> int | None:
        """The number of the turn that took ``prompt`` (given to ``send_awaited``), None
        if none did; forgets it."""
        awaited = self._awaited
        number = awaited.pop(id(prompt), 0) if awaited is not None else 0
        if not awaited:
            self._awaited = None
        return number or None

    def is_running(self, prompt: str) -> bool:
        """Whether the turn running now took ``prompt`` (that very object)."""
        turn = self._turn
        return turn is not None and any(taken is prompt for taken in turn.prompts)

    async def when_done(self, prompt: str) -> None:
        """Resolve once the turn that took ``prompt`` (given to ``send_awaited``) has
        ended and been flushed, or ``prompt`` was dropped before a turn took it, or the
        loop exited; turns of other prompts after it are not waited for."""
        while not self._has_exited:
            awaited = self._awaited
            number = awaited.get(id(prompt), 0) if awaited is not None else 0
            if number:
                if self._flushed >= number:
                    return
            elif not self.is_running(prompt) and not any(q is prompt for q in self.inbox.queued):
                return  # dropped (cancel(), disposal) before a turn took it
            if self._progress is None:
                self._progress = self._event()
            await self._progress.wait()

    async def when_idle(self) -> None:
        """Resolve when nothing is running or queued (disposed: once the loop exited)."""
        while True:
            if self._disposing or self._status == "disposed":
                await self._wait_exit()
                return
            if self._status == "idle" and self._turn is None and not self.inbox.queued:
                return
            if self._idle is None:
                self._idle = self._event()
            await self._idle.wait()

    # -- the loop driver --------------------------------------------------------------

    async def run(self) -> None:
        """The loop task. Runs until ``stop()``; what fails in it unexpectedly (a bug, a
        stray cancellation: ``dsh._stray``) is reported, and it serves on: only a real
        cancellation (the harness's exit) ends it early, never a failure reaching the
        harness's task group."""
        self.grace.enter()
        try:
            while not self._disposing:
                try:
                    await self._serve()
                except BaseException as exc:
                    if not failed(exc):
                        raise
                    await self._failed(exc)
        finally:
            self.grace.leave()
            self._status = "disposed"
            self._has_exited = True
            self._signal_idle()
            self._signal_progress()
            if self._exited is not None:
                self._exited.set()

    async def _serve(self) -> None:
        """Park until prompts are queued, or run one turn of them."""
        batch, refused = queue_mode(self.id, self.options)  # read per turn
        prompts = self.inbox.take_queued(batch)
        if not prompts:
            await self._park()
            return
        self.grace.reset()  # an abort before this turn bounds nothing in it
        turn = self._turn = TurnState(self._turns + 1, prompts)
        await self._set_status("running")
        if turn.cancelled or self._disposing:
            self._turn = None  # dropped before it started: no turn is opened
            self.inbox.requeue_steering()  # a steer that came after the cancel
            self._signal_progress()
            return
        self._turns += 1
        awaited = self._awaited
        if awaited:
            for prompt in prompts:
                if id(prompt) in awaited:
                    awaited[id(prompt)] = turn.number
        try:
            await self._steps.run_turn(turn, prompts, refused)
        finally:
            self._turn = None
        await self.flush()
        self._flushed = turn.number
        self._failures = 0
        if self._progress is not None:
            self._signal_progress()
        self.inbox.requeue_steering()

    async def _failed(self, exc: BaseException) -> None:
        """Report what failed in the loop task outside a turn's containment (log line,
        ``agent_error``); it serves on, unless this is the ``FAILURES_IN_A_ROW``th
        failure with no turn ending between (disposed). ``prompt()`` of the turn returns."""
        import anyio.lowlevel

        self._failures += 1
        stops = self._failures >= FAILURES_IN_A_ROW
        said = "it stops: the agent is disposed" if stops else "it serves on"
        log.error("agent %r: the agent loop failed (%s)", self.id, said, exc_info=exc)
        self._turn = None
        self._flushed = self._turns  # a turn numbered and failing is over
        self.inbox.requeue_steering()
        self._signal_progress()
        await self.relay.agent_error(self, exc)
        if stops:
            self.begin_stop()
        await anyio.lowlevel.checkpoint()  # the other tasks run, whatever fails again

    async def stop(self) -> None:
        """Dispose: the running turn ends ``disposed``, the loop exits, status ``disposed``."""
        self.begin_stop()
        await self._wait_exit()
        await self.relay.agent_status(self, "disposed")

    def begin_stop(self) -> None:
        """Mark the agent disposed now (a turn still running will end ``disposed``)."""
        if not self._disposing:
            self._disposing = True
            self.inbox.clear()  # also what steering is re-queued after the last turn
            self.grace.start("disposal")
            if self._turn is not None:
                self._turn.abort("disposed")
            self._wake.set()

    # -- internals --------------------------------------------------------------------

    def _start_grace(self, reason: str) -> None:
        """Begin the grace of a stop (``reason``) when a turn runs or a hook impl is in
        flight under the grace (a flush after the turn ended); idle, nothing happens."""
        if self._turn is not None or self.grace.scopes:
            self.grace.start(reason)

    def _check_alive(self, prompt: object) -> None:
        check_prompt(prompt)
        if self._disposing or self._status == "disposed":
            raise AgentDisposedError(f"agent {self.id!r} is disposed; it takes no more prompts")

    def _signal_idle(self) -> None:
        """Wake ``when_idle`` waiters so they re-check."""
        if self._idle is not None:
            self._idle.set()
            self._idle = None

    def _signal_progress(self) -> None:
        """Wake ``when_done`` waiters so they re-check."""
        if self._progress is not None:
            self._progress.set()
            self._progress = None

    async def _wait_exit(self) -> None:
        if not self._has_exited:
            if self._exited is None:
                self._exited = self._event()
            await self._exited.wait()

    def _poke(self) -> None:
        self._wake.set()

    async def _park(self) -> None:
        if self._status != "idle":
            await self._set_status("idle")
        self._signal_idle()
        await self._wake.wait()
        self._wake = self._event()

    async def _set_status(self, status: AgentStatus) -> None:
        self._status = status
        await self.relay.agent_status(self, status)

    async def flush(self) -> None:
        """Await ``session_flush``; a failure is reported, never raised, and kept as the
        reason the last turn was not saved (``unsaved``); a later flush that succeeds
        made the turns reported unsaved durable too (a flush stores everything logged so
        far), which is said."""
        try:
            await self.relay.session_flush(self.session)
            if self.unsaved:
                turns = ", ".join(map(str, self.unsaved))
                log.warning(
                    "agent %r: session %s saved after all (turn %s, reported not saved, "
                    "is stored now)",
                    *(self.id, self.session.id, turns),
                )
                self.unsaved.clear()
        except Exception as error:
            log.error(  # what is lost: the session's events since it was last saved
                "agent %r: session %s not saved (turn %d): %s",
                *(self.id, self.session.id, self._turns, error),
            )
            if self._turns:
                self.unsaved[self._turns] = error
                if len(self.unsaved) > _UNSAVED_KEPT:
                    del self.unsaved[next(iter(self.unsaved))]
            await self.relay.agent_error(self, error)


def _last_turn(session: Session) -> int:
    for event in reversed(session.events):
        if event.type == "turn/start":
            return int(event.data["turn"])
    return 0
