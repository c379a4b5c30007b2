"""The typed facade over the dispatcher: one method per hook, so call sites type-check."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from inspect import isawaitable
from typing import TYPE_CHECKING, Any, Final, Generic, Literal, TypeVar, final

import pluggy

from dsh._call_arguments import CallArguments, check_call, hook_arguments
from dsh._calling import Dispatcher
from dsh._hook_results import Check, unawaited
from dsh._stray import failed
from dsh.errors import HookError

if TYPE_CHECKING:
    from dsh.agent import Agent
    from dsh.approvals import ApprovalAnswer, ApprovalRequest
    from dsh.errors import ModelError
    from dsh.harness import Harness
    from dsh.hookspecs import AgentStatus
    from dsh.messages import (
        AssistantMessage,
        ContinuationDecision,
        ModelRequest,
        RequestErrorDecision,
        ToolCall,
        ToolResult,
    )
    from dsh.persistence import SessionPersistence
    from dsh.session import Session, SessionEvent

__all__ = ["HookRelay", "hook_returns"]


def hook_returns() -> dict[str, type]:
    """What the impls of the interception hooks, of ``tools_approval`` and of
    ``session_persistence`` must return (a harness installs it in its dispatcher;
    imported only then: building a relay must stay light)."""
    from dsh.approvals import ApprovalAnswer
    from dsh.messages import (
        AssistantMessage,
        ContinuationDecision,
        ModelRequest,
        RequestErrorDecision,
        ToolResult,
    )
    from dsh.persistence import SessionPersistence

    return {
        "agent_request": ModelRequest,
        "agent_step_result": AssistantMessage,
        "tools_execute": ToolResult,
        "agent_turn_continuation": ContinuationDecision,
        "agent_request_error": RequestErrorDecision,
        "tools_approval": ApprovalAnswer,
        # a Protocol: an answer lacking one of its methods (looked up with getattr, so
        # one forwarding through __getattr__ has them) is refused (dsh._hook_results)
        "session_persistence": SessionPersistence,
    }


@final
class HookRelay:
    """Calls each dsh hook with its call style. Obtain one from ``PluginManager.relay``."""

    __slots__ = ("_arguments", "_plans", "dispatcher")

    def __init__(self, dispatcher: Dispatcher) -> None:
        self.dispatcher = dispatcher
        # hook -> its arguments, for the calls by name (a spec never changes once added)
        self._arguments: Final[dict[str, CallArguments]] = {}
        # the dispatcher's plans, by hook (one dict for the dispatcher's life)
        self._plans: Final = dispatcher.plans

    # The interception hooks return the dispatcher's coroutine itself (no wrapping
    # coroutine of their own): they run on every step. A waterfall nobody implements
    # returns its value unchanged, so with no impl they return it, done, without
    # building the call's arguments or a coroutine. Their ``agent`` may be None, a
    # placeholder for a test that calls one hook without a loop (the impls receive it as
    # it is; the core's executor passes on every call of an agent without tools).

    def agent_request(
        self, agent: Agent | None, request: ModelRequest, turn: int, step: int
    ) -> Awaitable[ModelRequest]:
        if not self._plans["agent_request"]:
            return _Done((request,))
        kwargs = {"agent": agent, "request": request, "turn": turn, "step": step}
        return self.dispatcher.waterfall("agent_request", "request", kwargs)

    def agent_step_result(
        self, agent: Agent | None, message: AssistantMessage, turn: int, step: int
    ) -> Awaitable[AssistantMessage]:
        if not self._plans["agent_step_result"]:
            return _Done((message,))
        kwargs = {"agent": agent, "message": message, "turn": turn, "step": step}
        return self.dispatcher.waterfall("agent_step_result", "message", kwargs)

    async def tools_execute(
        self, agent: Agent | None, call: ToolCall, turn: int, step: int
    ) -> ToolResult | None:
        """The first answer, or None when no impl answered.

        Fails closed: when an impl raises, no later impl runs and the result is an error
        naming the plugin, so a broken permission check can never let a tool run.
        """
        kwargs = {"agent": agent, "call": call, "turn": turn, "step": step}
        try:
            answered = await self.dispatcher.first_result("tools_execute", kwargs)
        except HookError as error:
            from dsh.messages import ToolResult  # dsh.plugins stays light to import

            self.dispatcher.report(error)
            return ToolResult(
                call_id=call.id,
                content=f"tool {call.name!r} was not run: {error}",
                is_error=True,
            )
        return None if answered is None else answered[1]

    def agent_turn_continuation(
        self, agent: Agent | None, decision: ContinuationDecision, turn: int, step: int
    ) -> Awaitable[ContinuationDecision]:
        if not self._plans["agent_turn_continuation"]:
            return _Done((decision,))
        kwargs = {"agent": agent, "decision": decision, "turn": turn, "step": step}
        return self.dispatcher.waterfall("agent_turn_continuation", "decision", kwargs)

    async def agent_request_error(
        self,
        agent: Agent | None,
        request: ModelRequest,
        error: ModelError,
        decision: RequestErrorDecision,
        turn: int,
        step: int,
    ) -> RequestErrorDecision:
        kwargs = {
            "agent": agent,
            "request": request,
            "error": error,
            "decision": decision,
            "turn": turn,
            "step": step,
        }
        result: RequestErrorDecision = await self.dispatcher.waterfall(
            "agent_request_error", "decision", kwargs
        )
        return result

    async def session_event(self, session: Session, event: SessionEvent) -> None:
        """Every observer sees every event, even when an abort lands mid-notification
        (a durable observer must never miss a seq)."""
        pending = self.observe_event(session, event)
        if pending is not None:
            await pending

    def event_observer(
        self,
    ) -> Callable[[Session, SessionEvent], Awaitable[None] | None] | None:
        """What a session calls with each event, for the impls of ``session_event`` as
        they are now (the harness asks again whenever plugins come or go): None while
        there are none; with only sync impls, a function that calls each directly (no
        dispatch per event; a failure is reported naming the plugin, the rest still
        run); otherwise ``observe_event``."""
        plan = self.dispatcher.plan("session_event")
        if not plan:
            return None
        if any(impl.is_async for impl in plan):
            return self.observe_event
        dispatcher = self.dispatcher
        calls = tuple((_by_position(impl.function, impl.argnames), impl) for impl in plan)

        def observe(session: Session, event: SessionEvent) -> None:
            for call, impl in calls:
                try:
                    result = call(session, event)
                    if result is not None and isawaitable(result):
                        raise unawaited(result)
                except BaseException as exc:
                    if not failed(exc):  # a KeyboardInterrupt, a real cancellation
                        raise
                    dispatcher.report(impl.fail("session_event", exc))

        return observe

    def observe_event(self, session: Session, event: SessionEvent) -> Awaitable[None] | None:
        """``session_event`` as a session observer: sync impls run now; an awaitable is
        returned only when async impls need awaiting. (The harness installs it only while
        some plugin implements the hook.)"""
        return self.dispatcher.notify_inline("session_event", {"session": session, "event": event})

    async def tools_approval(
        self, agent: Agent, call: ToolCall, request: ApprovalRequest
    ) -> tuple[str, ApprovalAnswer] | None:
        # with the plugin that answered, (plugin name, answer): the asker says who
        kwargs = {"agent": agent, "call": call, "request": request}
        return await self.dispatcher.first_result("tools_approval", kwargs)

    def session_flush(self, session: Session) -> Awaitable[None]:
        return self.dispatcher.gather("session_flush", {"session": session})

    async def session_persistence(
        self, harness: Harness | None = None
    ) -> SessionPersistence | None:
        """The service of the store ``harness`` uses (pass the harness you run in: a
        plugin shared by several harnesses of a process tells them apart by it)."""
        kwargs = {"harness": harness}
        answered = await self.dispatcher.first_result("session_persistence", kwargs)
        return None if answered is None else answered[1]

    async def harness_started(self, harness: Harness) -> None:
        # in hook order; the first failure stops start-up (HookError): a plugin that
        # could not set up is never used half-ready
        await self.dispatcher.collect("harness_started", {"harness": harness})

    async def harness_stopping(self, harness: Harness) -> None:
        await self.dispatcher.notify("harness_stopping", {"harness": harness})

    async def agent_created(
        self, agent: Agent, source: Literal["startup", "create", "resume"]
    ) -> None:
        # each observer is told, the start cancelled meanwhile or not: each is then told
        # agent_disposed as the start is undone (see the hookspec)
        await self.dispatcher.notify_each("agent_created", {"agent": agent, "source": source})

    def agent_status(self, agent: Agent, status: AgentStatus) -> Awaitable[None]:
        return self.dispatcher.notify("agent_status", {"agent": agent, "status": status})

    async def agent_error(self, agent: Agent, error: BaseException) -> None:
        await self.dispatcher.notify("agent_error", {"agent": agent, "error": error})

    async def agent_disposed(self, agent: Agent) -> None:
        await self.dispatcher.notify("agent_disposed", {"agent": agent})

    def register_tools(self, callback: Callable[..., None]) -> None:
        self.dispatcher.register("register_tools", callback)

    def register_models(self, callback: Callable[..., None]) -> None:
        self.dispatcher.register("register_models", callback)

    def register_settings(self, callback: Callable[..., None]) -> None:
        self.dispatcher.register("register_settings", callback)

    def register_secrets(self, callback: Callable[..., None]) -> None:
        self.dispatcher.register("register_secrets", callback)

    def register_history_reducers(self, callback: Callable[..., None]) -> None:
        self.dispatcher.register("register_history_reducers", callback)

    def register_commands(self, callback: Callable[..., None]) -> None:
        self.dispatcher.register("register_commands", callback)

    def register_chat_commands(self, callback: Callable[..., None]) -> None:
        self.dispatcher.register("register_chat_commands", callback)

    # -- any hook, by call style: for plugins that add hookspecs of their own ----------
    # (each checks the hook and the arguments first: ValueError, TypeError)

    def _check(self, hook: str, kwargs: dict[str, Any]) -> None:
        arguments = self._arguments.get(hook)
        if arguments is None:
            arguments = self._arguments[hook] = hook_arguments(self.dispatcher.hooks, hook)
        check_call(hook, arguments, kwargs)

    async def call_waterfall(
        self, hook: str, key: str, *, wrong: Check | None = None, **kwargs: Any
    ) -> Any:
        """Chain ``kwargs[key]`` through ``hook``'s impls (None = unchanged).

        ``wrong(result)`` says what is wrong with an impl's result (``"returned ..."``),
        or None (only None: ``""`` refuses it too): a wrong result, or an exception the
        check raises, stops the call as that impl's failure, a HookError naming its
        plugin and impl, before the next impl sees it."""
        self._check(hook, kwargs)
        return await self.dispatcher.waterfall(hook, key, kwargs, wrong)

    async def call_first_result(self, hook: str, **kwargs: Any) -> Any:
        """The first non-None result of ``hook``, or None."""
        self._check(hook, kwargs)
        answered = await self.dispatcher.first_result(hook, kwargs)
        return None if answered is None else answered[1]

    async def call_first_named(self, hook: str, **kwargs: Any) -> tuple[str, Any] | None:
        """``call_first_result`` with the plugin that answered: ``(plugin name, result)``,
        or None. A raising impl stops the call; its HookError names the plugin."""
        self._check(hook, kwargs)
        return await self.dispatcher.first_result(hook, kwargs)

    async def call_collect(self, hook: str, **kwargs: Any) -> list[Any]:
        """Every impl's non-None result, in hook order."""
        self._check(hook, kwargs)
        return await self.dispatcher.collect(hook, kwargs)

    async def call_notify(self, hook: str, **kwargs: Any) -> None:
        """Run every impl; failures are reported, never raised."""
        self._check(hook, kwargs)
        await self.dispatcher.notify(hook, kwargs)

    def implemented(self, hook: str) -> bool:
        """Whether ``hook`` may be called and any plugin implements it: its spec is loaded
        (calling a hook whose spec is not is a ``ValueError``, even when an optionalhook
        impl of it is) and it has an impl. Lets callers skip building arguments, and a
        plugin call another plugin's hook only when that plugin is loaded."""
        if not self.dispatcher.plan(hook):
            return False
        caller = getattr(self.dispatcher.hooks, hook, None)
        return isinstance(caller, pluggy.HookCaller) and caller.has_spec()

    def failure(self, plugin: str, hook: str, cause: BaseException) -> HookError:
        """The ``HookError`` of ``plugin``'s impl of ``hook`` failing with ``cause``,
        naming the impl as dsh names one that raised: for an answer your plugin found
        wrong and carried on without (``report`` it)."""
        for impl in self.dispatcher.plan(hook):
            if impl.plugin_name == plugin:
                return impl.fail(hook, cause)
        return HookError(plugin, hook, hook, cause)  # not an impl of it now

    def report(self, error: HookError) -> None:
        """Report the failure of an impl of a hook of yours that you contained (caught
        and carried on without its answer), as dsh reports one it contains: an ERROR
        record naming the plugin and hook, and dsh.testing's ``ErrorRecorder`` records
        it in ``failures``."""
        self.dispatcher.report(error)


_T = TypeVar("_T")


@final
class _Done(tuple[_T], Generic[_T]):
    """An awaitable already done: awaiting ``_Done((value,))`` gives ``value`` at once
    (a 1-tuple built in C, and a generator in place of a coroutine and its frame)."""

    __slots__ = ()

    def __await__(self) -> Generator[Any, None, _T]:
        return self[0]
        yield  # type: ignore[unreachable]  # a generator: awaiting it returns at once


def _by_position(
    function: Callable[..., Any], argnames: tuple[str, ...]
) -> Callable[[Session, SessionEvent], Any]:
    """``function`` called as ``(session, event)``, passing only the names it takes."""
    if argnames == ("session", "event"):
        return function
    if argnames == ("event",):
        return lambda session, event: function(event)
    if argnames == ("session",):
        return lambda session, event: function(session)
    if argnames == ("event", "session"):
        return lambda session, event: function(event, session)
    return lambda session, event: function()
