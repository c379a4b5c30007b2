"""The dispatcher and the relay, tested against hand-made mutants of ``dsh._calling`` and
``dsh._relay``: order among the core defaults, falsy answers, ``collect``, cached
async-ness after unregistering, the impl an error names, cancellation of a gather, and
the arguments and return types of the interception hooks."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest

from dsh import (
    ContinuationDecision,
    HookError,
    ModelRequest,
    PluginManager,
    ToolCall,
    ToolResult,
    hookimpl,
    hookspec,
)
from dsh._calling import Dispatcher
from dsh._relay import hook_returns
from dsh.errors import ModelError
from dsh.messages import AssistantMessage, RequestErrorDecision

CALL = ToolCall(id="c1", name="add", arguments="{}")


class Specs:
    """A plugin's own hooks, so the generic call styles can be driven directly."""

    @staticmethod
    @hookspec
    def verdict(word: str) -> Any: ...


def answering(value: Any, seen: list[str], name: str) -> object:
    class Plugin:
        @hookimpl(optionalhook=True)
        def verdict(self, word: str) -> Any:
            seen.append(name)
            return value

    return Plugin()


def test_the_last_plugins_keep_pluggys_order_among_themselves(dsh_pm: PluginManager) -> None:
    """Mutant: the core defaults' impls taken in registration order, not call order."""

    def plugin(tryfirst: bool = False, trylast: bool = False) -> object:
        class Plugin:
            @hookimpl(tryfirst=tryfirst, trylast=trylast)
            def agent_request(self) -> None: ...

        return Plugin()

    dsh_pm.register(plugin(tryfirst=True), "c1")
    dsh_pm.register(plugin(), "c2")
    dsh_pm.register(plugin(trylast=True), "p1")
    dsh_pm.register(plugin(), "p2")
    dispatcher = Dispatcher(dsh_pm, last=("c1", "c2"))
    order = [impl.plugin_name for impl in dispatcher.plan("agent_request")]
    # pluggy's order is c1 (tryfirst), p2, c2, p1 (trylast); c1 and c2 move to the end
    assert order == ["p2", "p1", "c1", "c2"]


@pytest.mark.parametrize("falsy", [False, 0, ""])
async def test_a_falsy_answer_is_an_answer(dsh_pm: PluginManager, falsy: object) -> None:
    """Mutant: ``if result:`` instead of ``if result is not None`` (a False deny lost)."""
    seen: list[str] = []
    dsh_pm.add_hookspecs(Specs)
    dsh_pm.register(answering("allow", seen, "late"), "late")
    dsh_pm.register(answering(falsy, seen, "deny"), "deny")
    dsh_pm.register(answering(None, seen, "pass"), "pass")
    assert await dsh_pm.relay.call_first_named("verdict", word="w") == ("deny", falsy)
    assert seen == ["pass", "deny"]
    assert await dsh_pm.relay.call_collect("verdict", word="w") == [falsy, "allow"]


async def test_collect_awaits_async_impls_and_a_failure_names_its_plugin(
    dsh_pm: PluginManager,
) -> None:
    """Mutants: collect not awaiting coroutines; collect skipping a raising impl."""

    class Async:
        @hookimpl(optionalhook=True)
        async def verdict(self, word: str) -> str:
            await anyio.lowlevel.checkpoint()
            return word + "-async"

    class Broken:
        @hookimpl(optionalhook=True)
        def verdict(self) -> None:
            raise LookupError("no verdict")

    dsh_pm.add_hookspecs(Specs)
    dsh_pm.register(Async(), "async")
    assert await dsh_pm.relay.call_collect("verdict", word="w") == ["w-async"]
    dsh_pm.register(Broken(), "broken")
    with pytest.raises(HookError) as info:
        await dsh_pm.relay.call_collect("verdict", word="w")
    assert (info.value.plugin, info.value.hook) == ("broken", "verdict")
    assert isinstance(info.value.cause, LookupError)


async def test_a_hook_error_names_the_impl_with_the_arguments_it_takes(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    """Mutant: ``Impl.describe`` without the impl's name or its argument names."""

    class Broken:
        @hookimpl
        def agent_turn_continuation(self, decision: ContinuationDecision, turn: int) -> None:
            raise ValueError("boom")

    dsh_register(Broken(), "broken")
    with pytest.raises(HookError) as info:
        await dsh_pm.relay.agent_turn_continuation(
            agent=None,  # type: ignore[arg-type]
            decision=ContinuationDecision(action="stop"),
            turn=1,
            step=1,
        )
    assert info.value.impl.endswith("Broken.agent_turn_continuation(decision, turn)")
    assert f"(impl {info.value.impl})" in str(info.value)


async def test_sync_observers_run_inline_again_once_the_async_one_is_gone(
    dsh_pm: PluginManager,
) -> None:
    """Mutant: ``invalidate`` keeps the set of hooks whose plan holds an async impl, so
    the remaining sync observers keep paying for a shielded coroutine."""
    seen: list[str] = []

    class Sync:
        @hookimpl
        def session_event(self, event: str) -> None:
            seen.append("sync-" + event)

    class Async:
        @hookimpl
        async def session_event(self, event: str) -> None:
            await anyio.lowlevel.checkpoint()
            seen.append("async-" + event)

    dsh_pm.register(Sync(), "sync")
    dsh_pm.register(Async(), "async")
    pending = dsh_pm.relay.observe_event(None, "a")  # type: ignore[arg-type]
    assert pending is not None
    await pending
    dsh_pm.unregister(name="async")
    assert dsh_pm.relay.observe_event(None, "b") is None  # type: ignore[arg-type]
    assert seen == ["async-a", "sync-a", "sync-b"]


@pytest.mark.parametrize("count", [1, 2])
async def test_cancelling_a_gather_cancels_and_is_not_reported_as_a_failure(
    dsh_register: Any, dsh_pm: PluginManager, count: int
) -> None:
    """Mutant: the gather catching BaseException, so a cancellation turns into a
    HookError naming an innocent flusher. (With one impl it is awaited directly; with
    two, in a task group, whose exit delivers the cancellation anyway.)"""
    started: list[str] = []
    scope = anyio.CancelScope()

    def flusher(name: str) -> object:
        class Plugin:
            @hookimpl
            async def session_flush(self) -> None:
                started.append(name)
                if len(started) == count:  # all are waiting: cancel the caller
                    scope.cancel()
                await anyio.sleep_forever()

        return Plugin()

    for n in range(count):
        dsh_register(flusher(f"f{n}"), f"f{n}")
    with anyio.fail_after(5), scope:
        await dsh_pm.relay.session_flush(session=None)  # type: ignore[arg-type]
    assert scope.cancelled_caught
    assert len(started) == count


def test_register_passes_keyword_arguments_through(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    """Mutant: the stamped ``register`` callback dropping keyword arguments."""

    class Tools:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register("add", group="maths")

    dsh_register(Tools(), "maths")
    got: list[tuple[str, str, str]] = []
    dsh_pm.relay.register_tools(lambda plugin, tool, group="-": got.append((plugin, tool, group)))
    assert ("maths", "add", "maths") in got


async def test_tools_execute_and_request_error_get_turn_and_step_by_name(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    """Mutants: ``turn`` and ``step`` swapped in the relay's kwargs of either hook."""
    seen: list[tuple[str, int, int]] = []

    class Plugin:
        @hookimpl
        def tools_execute(self, step: int, turn: int) -> ToolResult:
            seen.append(("tools_execute", turn, step))
            return ToolResult(call_id="c1", content="answered")

        @hookimpl
        def agent_request_error(self, step: int, turn: int) -> None:
            seen.append(("agent_request_error", turn, step))

    dsh_register(Plugin(), "p")
    relay = dsh_pm.relay
    answer = await relay.tools_execute(agent=None, call=CALL, turn=3, step=7)  # type: ignore[arg-type]
    assert answer == ToolResult(call_id="c1", content="answered")
    decision = RequestErrorDecision(action="fail")
    kept = await relay.agent_request_error(
        agent=None,  # type: ignore[arg-type]
        request=ModelRequest(),
        error=ModelError("SERVER", "down"),
        decision=decision,
        turn=3,
        step=7,
    )
    assert kept is decision
    assert seen == [("tools_execute", 3, 7), ("agent_request_error", 3, 7)]


def _call(relay: Any, hook: str) -> Any:
    request = ModelRequest()
    if hook == "agent_request":
        return relay.agent_request(None, request, 1, 1)
    if hook == "agent_step_result":
        return relay.agent_step_result(None, AssistantMessage(), 1, 1)
    if hook == "agent_turn_continuation":
        return relay.agent_turn_continuation(None, ContinuationDecision(action="stop"), 1, 1)
    decision = RequestErrorDecision(action="fail")
    return relay.agent_request_error(None, request, ModelError("SERVER", "down"), decision, 1, 1)


def _raise(self: object) -> None:
    raise KeyError("broken")


@pytest.mark.parametrize("raises", [False, True])
@pytest.mark.parametrize(
    "hook",
    ["agent_request", "agent_step_result", "agent_turn_continuation", "agent_request_error"],
)
async def test_an_interception_impl_that_fails_is_named_not_the_first_impl(
    dsh_pm: PluginManager, hook: str, raises: bool
) -> None:
    """Mutants: a hook missing from ``hook_returns``; the waterfall not checking
    a value's type; the error naming the first impl rather than the one that failed."""

    class Fine:
        pass

    class Wrong:
        pass

    wrong = _raise if raises else lambda self: {"not": "a model"}
    setattr(Fine, hook, hookimpl(lambda self: None))
    setattr(Wrong, hook, hookimpl(wrong))
    dsh_pm.dispatcher.returns.update(hook_returns())
    dsh_pm.register(Wrong(), "wrong")
    dsh_pm.register(Fine(), "fine")  # runs first, answers None
    with pytest.raises(HookError) as info:
        await _call(dsh_pm.relay, hook)
    assert (info.value.plugin, info.value.hook, info.value.code) == ("wrong", hook, "HOOK")
    if raises:
        assert isinstance(info.value.cause, KeyError)
    else:
        assert isinstance(info.value.cause, TypeError)
        assert "returned dict where" in str(info.value.cause)


def test_a_listener_sees_the_impls_as_they_are_after_the_change(dsh_pm: PluginManager) -> None:
    """Mutant: ``invalidate`` calls the listeners before it drops the cached plans, so
    what they re-derive (a session's event observer) misses the plugin just added."""
    seen: list[list[str]] = []
    relay = dsh_pm.relay

    def listener() -> None:
        seen.append([impl.plugin_name for impl in relay.dispatcher.plan("session_event")])

    class Observer:
        @hookimpl
        def session_event(self) -> None: ...

    assert relay.event_observer() is None  # the plan is cached, empty
    dsh_pm.dispatcher.listeners.append(listener)
    observer = Observer()
    dsh_pm.register(observer, "observer")
    assert dsh_pm.unregister(observer) is observer
    assert seen == [["observer"], []]
