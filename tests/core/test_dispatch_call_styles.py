"""The async dispatcher: order, binding, sync/async, and the five call styles."""

from __future__ import annotations

from typing import Any

import anyio
import anyio.lowlevel
import pytest
from dispatch_support import CALL, REQ, appender, request_through

from dsh import (
    HookError,
    ModelRequest,
    PluginManager,
    ToolCall,
    ToolResult,
    hookimpl,
    hookspec,
)
from dsh._ready import READY
from dsh.testing import HookRecorder


async def test_order_is_lifo_with_tryfirst_and_trylast(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    dsh_register(appender("-last", trylast=True), "a")
    dsh_register(appender("-1"), "b")
    dsh_register(appender("-2"), "c")
    dsh_register(appender("-first", tryfirst=True), "d")
    result = await request_through(dsh_pm)
    # tryfirst, then later-registered before earlier, then trylast
    assert result.system == "base-first-2-1-last"


async def test_impl_gets_only_the_arguments_it_names(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    seen: list[tuple[Any, ...]] = []

    class NoArgs:
        @hookimpl
        def agent_request(self) -> None:
            seen.append(())

    class Some:
        @hookimpl
        def agent_request(self, step: int, turn: int) -> None:
            seen.append((step, turn))

    dsh_register(NoArgs(), "none")
    dsh_register(Some(), "some")
    await dsh_pm.relay.agent_request(agent=None, request=REQ, turn=3, step=7)  # type: ignore[arg-type]
    assert seen == [(7, 3), ()]


async def test_sync_and_async_impls_mix_in_order(dsh_register: Any, dsh_pm: PluginManager) -> None:
    class Async:
        @hookimpl
        async def agent_request(self, request: ModelRequest) -> ModelRequest:
            await anyio.lowlevel.checkpoint()
            return request.model_copy(update={"system": request.system + "-async"})

    dsh_register(appender("-sync1"), "s1")
    dsh_register(Async(), "a")
    dsh_register(appender("-sync2"), "s2")
    assert (await request_through(dsh_pm)).system == "base-sync2-async-sync1"


async def test_waterfall_none_means_unchanged(dsh_register: Any, dsh_pm: PluginManager) -> None:
    seen: list[str] = []

    class Observer:
        @hookimpl
        def agent_request(self, request: ModelRequest) -> None:
            seen.append(request.system)

    dsh_register(Observer(), "observer")  # called second: sees the rewrite
    dsh_register(appender("-x"), "rewriter")
    dsh_register(Observer(), "observer2")  # called first: sees the original
    assert (await request_through(dsh_pm)).system == "base-x"
    assert seen == ["base", "base-x"]


async def test_waterfall_with_no_impls_returns_the_input(dsh_pm: PluginManager) -> None:
    assert await request_through(dsh_pm) is REQ


async def test_firstresult_short_circuits(dsh_register: Any, dsh_pm: PluginManager) -> None:
    calls: list[str] = []

    def answering(name: str, answer: bool) -> object:
        class Plugin:
            @hookimpl
            def tools_execute(self, call: ToolCall) -> ToolResult | None:
                calls.append(name)
                return ToolResult(call_id=call.id, content=name) if answer else None

        return Plugin()

    dsh_register(answering("late", True), "late")
    dsh_register(answering("winner", True), "winner")
    dsh_register(answering("passes", False), "passes")
    result = await dsh_pm.relay.tools_execute(agent=None, call=CALL, turn=1, step=1)  # type: ignore[arg-type]
    assert result is not None and result.content == "winner"
    assert calls == ["passes", "winner"]


async def test_gather_runs_concurrently_and_raises_first_failure_after_all_settle(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    started: list[str] = []
    finished: list[str] = []
    both_started = anyio.Event()

    def flusher(name: str, fail: bool) -> object:
        class Plugin:
            @hookimpl
            async def session_flush(self) -> None:
                started.append(name)
                if len(started) == 3:
                    both_started.set()
                await both_started.wait()  # deadlocks unless all run concurrently
                await anyio.sleep(0.01 if fail else 0.02)
                finished.append(name)
                if fail:
                    raise OSError(f"{name} failed")

        return Plugin()

    dsh_register(flusher("slow-ok", False), "p1")
    dsh_register(flusher("fails-2nd", True), "p2")
    dsh_register(flusher("fails-1st", True), "p3")
    with anyio.fail_after(5), pytest.raises(HookError) as info:
        await dsh_pm.relay.session_flush(session=None)  # type: ignore[arg-type]
    assert sorted(finished) == ["fails-1st", "fails-2nd", "slow-ok"]
    # first in hook order (p3 registered last is called first), not first in time
    assert info.value.plugin == "p3"


async def test_gather_with_sync_impls(dsh_register: Any, dsh_pm: PluginManager) -> None:
    flushed: list[str] = []

    class Sync:
        @hookimpl
        def session_flush(self, session: str) -> None:
            flushed.append(session)

    dsh_register(Sync(), "sync")
    await dsh_pm.relay.session_flush(session="s")  # type: ignore[arg-type]
    assert flushed == ["s"]


async def test_gather_runs_a_single_sync_impl_at_once_and_raises_its_failure_when_awaited(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    # one sync impl (a persistence plugin's flush, after every turn) costs no coroutine
    flushed: list[str] = []

    class Sync:
        @hookimpl
        def session_flush(self, session: str) -> None:
            flushed.append(session)
            if session == "bad":
                raise OSError("disk full")

    dsh_register(Sync(), "sync")
    assert dsh_pm.dispatcher.gather("session_flush", {"session": "s"}) is READY
    assert flushed == ["s"]
    failed = dsh_pm.dispatcher.gather("session_flush", {"session": "bad"})
    assert flushed == ["s", "bad"]
    with pytest.raises(HookError) as info:
        await failed
    assert (info.value.plugin, info.value.hook) == ("sync", "session_flush")
    assert isinstance(info.value.cause, OSError)


async def test_gather_awaits_a_single_async_impl_in_the_callers_task(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    tasks: list[int] = []

    class Flusher:
        @hookimpl
        async def session_flush(self, session: str) -> None:
            await anyio.lowlevel.checkpoint()
            tasks.append(anyio.get_current_task().id)
            raise OSError(f"disk full while flushing {session}")

    dsh_register(Flusher(), "only")
    with pytest.raises(HookError) as info:
        await dsh_pm.relay.session_flush(session="s")  # type: ignore[arg-type]
    assert (info.value.plugin, info.value.hook) == ("only", "session_flush")
    assert "disk full while flushing s" in str(info.value)
    assert tasks == [anyio.get_current_task().id]


async def test_hook_recorder_sees_calls_in_order(
    dsh_hook_recorder: HookRecorder, dsh_pm: PluginManager
) -> None:
    await request_through(dsh_pm)
    await dsh_pm.relay.session_flush(session="s")  # type: ignore[arg-type]
    assert dsh_hook_recorder.names() == ["agent_request", "session_flush"]
    assert dsh_hook_recorder.get("agent_request")[0].kwargs["request"] is REQ


async def test_core_defaults_run_after_a_plugins_trylast_impl(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    class LateAnswer:
        @hookimpl(trylast=True)
        def tools_execute(self, call: ToolCall) -> ToolResult:
            return ToolResult(call_id=call.id, content="answered by plugin")

    dsh_register(LateAnswer(), "late")
    order = [impl.plugin_name for impl in dsh_pm.dispatcher.plan("tools_execute")]
    assert order == ["late", "dsh.builtins"]
    result = await dsh_pm.relay.tools_execute(agent=None, call=CALL, turn=1, step=1)  # type: ignore[arg-type]
    assert result == ToolResult(call_id="c1", content="answered by plugin")


async def test_a_plugins_own_hooks_are_called_by_style(dsh_pm: PluginManager) -> None:
    class Specs:
        @staticmethod
        @hookspec
        def tag_words(word: str) -> str | None: ...

    def tagger(suffix: str | None) -> object:
        class Plugin:
            @hookimpl(optionalhook=True)
            def tag_words(self, word: str) -> str | None:
                return None if suffix is None else word + suffix

        return Plugin()

    dsh_pm.add_hookspecs(Specs)
    dsh_pm.register(tagger("-a"), "a")
    dsh_pm.register(tagger(None), "none")
    dsh_pm.register(tagger("-b"), "b")
    relay = dsh_pm.relay
    assert await relay.call_collect("tag_words", word="w") == ["w-b", "w-a"]
    assert await relay.call_first_result("tag_words", word="w") == "w-b"
    assert await relay.call_first_named("tag_words", word="w") == ("b", "w-b")
    assert await relay.call_waterfall("tag_words", "word", word="w") == "w-b-a"
    dsh_pm.unregister(name="b")
    assert await relay.call_first_named("tag_words", word="w") == ("a", "w-a")  # None skipped


def allowlist_specs(dsh_pm: PluginManager) -> list[str]:
    """The ``allowlisted`` hook of docs/hooks.md, with an impl that records its calls."""

    class Specs:
        @staticmethod
        @hookspec(firstresult=True)
        def allowlisted(agent: Any, call: Any, reason: str) -> bool | None: ...

    calls: list[str] = []

    class Plugin:
        @hookimpl(optionalhook=True)
        def allowlisted(self, call: Any, reason: str) -> bool | None:
            calls.append(reason)
            return None

    dsh_pm.add_hookspecs(Specs)
    dsh_pm.register(Plugin(), "lister")
    return calls


STYLES = ["call_first_result", "call_first_named", "call_collect", "call_notify"]


@pytest.mark.parametrize("style", [*STYLES, "call_waterfall"])
async def test_a_call_of_a_misspelt_hook_is_refused_naming_it(
    dsh_pm: PluginManager, style: str
) -> None:
    allowlist_specs(dsh_pm)
    call = getattr(dsh_pm.relay, style)
    args = ("allowlistd", "call") if style == "call_waterfall" else ("allowlistd",)
    with pytest.raises(ValueError, match="unknown hook") as info:
        await call(*args, agent=None, call=CALL, reason="r")
    assert str(info.value) == (
        "unknown hook 'allowlistd': no loaded plugin specifies it; did you mean 'allowlisted'?"
    )


async def test_a_hook_whose_spec_is_not_loaded_is_not_implemented_and_a_call_says_so(
    dsh_pm: PluginManager,
) -> None:
    """hooks.md: call another plugin's hook when ``relay.implemented(hook)``; with only
    an optionalhook impl of it loaded, not its spec, the guarded call does nothing."""
    answered: list[Any] = []

    class Plugin:
        @hookimpl(optionalhook=True)
        def allowlisted(self, call: Any) -> bool | None:
            answered.append(call)
            return True

    dsh_pm.register(Plugin(), "answer")
    relay = dsh_pm.relay
    if relay.implemented("allowlisted"):
        await relay.call_first_result("allowlisted", agent=None, call=CALL, reason="r")
    assert answered == []
    with pytest.raises(ValueError, match="impls of it are loaded") as info:
        await relay.call_first_result("allowlisted", agent=None, call=CALL, reason="r")
    assert str(info.value) == (
        "unknown hook 'allowlisted': impls of it are loaded, but not the plugin that "
        "specifies it; call it only when relay.implemented('allowlisted') says so"
    )
    allowlist_specs(dsh_pm)  # the spec's plugin loads: now the guard lets the call through
    assert relay.implemented("allowlisted")
    assert await relay.call_first_result("allowlisted", agent=None, call=CALL, reason="r")
    assert answered == [CALL]


@pytest.mark.parametrize("style", STYLES)
async def test_a_call_missing_an_argument_or_passing_another_is_the_callers_typeerror(
    dsh_pm: PluginManager, style: str
) -> None:
    calls = allowlist_specs(dsh_pm)
    call = getattr(dsh_pm.relay, style)
    takes = "it takes agent, call, reason (by name)"
    with pytest.raises(TypeError) as info:  # not a HookError blaming the impl
        await call("allowlisted", agent=None, call=CALL)
    assert str(info.value) == f"call of hook 'allowlisted': missing argument 'reason'; {takes}"
    with pytest.raises(TypeError) as info:
        await call("allowlisted", agent=None, call=CALL, reason="r", extra=1)
    assert str(info.value) == f"call of hook 'allowlisted': no argument 'extra'; {takes}"
    assert calls == []  # no impl ran
    await call("allowlisted", agent=None, call=CALL, reason="r")
    assert calls == ["r"]


async def test_a_waterfall_on_an_argument_the_hook_has_not_is_refused(
    dsh_pm: PluginManager,
) -> None:
    allowlist_specs(dsh_pm)
    with pytest.raises(TypeError, match="call of hook 'allowlisted': no argument 'budget'"):
        await dsh_pm.relay.call_waterfall(
            "allowlisted", "budget", agent=None, call=CALL, reason="r", budget=1
        )


async def test_a_hook_nobody_implements_is_planned_once_and_costs_no_coroutine(
    dsh_pm: PluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    dispatcher = dsh_pm.dispatcher
    built: list[str] = []
    build = dispatcher._build
    monkeypatch.setattr(dispatcher._plans, "_build", lambda hook: built.append(hook) or build(hook))
    for _ in range(3):
        assert dispatcher.notify("agent_status", {"agent": None, "status": "idle"}) is READY
        assert dispatcher.gather("session_flush", {"session": None}) is READY
        await dispatcher.waterfall("agent_request", "request", {"request": "r"})
    # an empty plan is a plan: each hook is looked up in pluggy once, not once per call
    assert sorted(built) == ["agent_request", "agent_status", "session_flush"]

    class Status:
        @hookimpl
        def agent_status(self, status: str) -> None:
            seen.append(status)

    seen: list[str] = []
    dsh_pm.register(Status(), "status")
    notified = dispatcher.notify("agent_status", {"agent": None, "status": "idle"})
    assert notified is not READY
    await notified
    assert seen == ["idle"]


async def test_an_async_impl_behind_a_wraps_decorator_is_awaited(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    import functools

    def logged(function: Any) -> Any:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return function(*args, **kwargs)  # a coroutine, not awaited here

        return wrapper

    seen: list[str] = []

    class Plugin:
        @hookimpl
        @logged
        async def session_event(self, event: Any) -> None:
            await anyio.lowlevel.checkpoint()
            seen.append(event)

    dsh_register(Plugin(), "wrapped")
    with anyio.fail_after(5):
        await dsh_pm.relay.session_event(session=None, event="e")  # type: ignore[arg-type]
    assert seen == ["e"]


async def test_a_plain_impl_behind_an_async_wraps_decorator_is_awaited(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    """The function called is the async wrapper: it is awaited, though unwrapping finds
    a plain def (it failed: "returned coroutine from a plain def")."""
    import functools

    def timed(function: Any) -> Any:
        @functools.wraps(function)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            await anyio.lowlevel.checkpoint()
            return function(*args, **kwargs)

        return wrapper

    class Plugin:
        @hookimpl
        @timed
        def agent_request(self, request: Any) -> Any:
            return request.model_copy(update={"system": request.system + "+timed"})

    dsh_register(Plugin(), "timed")
    with anyio.fail_after(5):
        request = await dsh_pm.relay.agent_request(None, REQ, turn=1, step=1)  # type: ignore[arg-type]
    assert request.system == "base+timed"


async def test_a_plain_wraps_decorator_that_runs_the_async_impl_itself_is_not_awaited(
    dsh_register: Any, dsh_pm: PluginManager
) -> None:
    """A plain wrapper of an ``async def`` impl that runs the coroutine itself and
    returns its result: the result is taken as it is (awaiting it failed: "object
    Request can't be used in 'await' expression")."""
    import functools

    def driven(function: Any) -> Any:
        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            coroutine = function(*args, **kwargs)
            try:
                coroutine.send(None)  # it never suspends
            except StopIteration as done:
                return done.value
            raise AssertionError("the impl suspended")

        return wrapper

    class Plugin:
        @hookimpl
        @driven
        async def agent_request(self, request: Any) -> Any:
            return request.model_copy(update={"system": request.system + "+driven"})

    dsh_register(Plugin(), "driven")
    with anyio.fail_after(5):
        request = await dsh_pm.relay.agent_request(None, REQ, turn=1, step=1)  # type: ignore[arg-type]
    assert request.system == "base+driven"


def test_relay_failure_names_the_impl_as_a_raising_one_is_named(dsh_pm: PluginManager) -> None:
    """hooks.md: an answer a plugin finds wrong is reported with
    ``relay.failure(plugin, hook, cause)``, naming the impl as dsh names one that raised."""
    allowlist_specs(dsh_pm)
    wrong = TypeError("answered 'yes'")
    error = dsh_pm.relay.failure("lister", "allowlisted", wrong)
    assert (error.plugin, error.hook, error.cause) == ("lister", "allowlisted", wrong)
    assert error.impl == "allowlist_specs.<locals>.Plugin.allowlisted(call, reason)"
    assert str(error).startswith(
        "plugin 'lister' failed in hook allowlisted (impl allowlist_specs.<locals>.Plugin."
    )
    # a plugin that has no impl of it (unregistered since): the hook names it
    assert dsh_pm.relay.failure("gone", "allowlisted", wrong).impl == "allowlisted"
