"""A plain ``def`` impl that returns a coroutine (``return self.flush_async()``): dsh
awaits only ``async def`` impls, so such an impl fails, naming its plugin and saying to
make it ``async def``, in every call style; it is never dropped unawaited (a flush that
silently never ran), and no "never awaited" warning points into dsh. An ``async def``
impl that returns a coroutine it forgot to await fails too, told to await it."""

from __future__ import annotations

import gc
import warnings
from typing import Any

import anyio
import pytest

from dsh import HookError, hookimpl
from dsh.plugins import PluginManager
from dsh.session import Session
from dsh.testing import ScriptedModel, run_turn, scripted_harness

FIX = "make the impl async def so that it is awaited"
ran: list[str] = []


async def later(what: str) -> None:
    ran.append(what)


def assert_no_coroutine_left_unawaited() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unawaited coroutine warns when collected
        gc.collect()
    assert ran == []


class Flush:
    @hookimpl
    def session_flush(self, session: Any) -> Any:
        return later("flush")


class Observe:
    @hookimpl
    def session_event(self, event: Any) -> Any:
        return later("event")


class Request:
    @hookimpl
    def agent_request(self, request: Any) -> Any:
        return later("request")


class Stopping:
    @hookimpl
    def harness_stopping(self, harness: Any) -> Any:
        return later("stopping")


@pytest.fixture(autouse=True)
def clean() -> None:
    ran.clear()


@pytest.mark.parametrize("flushers", [1, 2], ids=["one-flusher", "two-flushers"])
async def test_a_flush_returned_unawaited_fails_the_flush_naming_the_plugin(
    dsh_pm: PluginManager, flushers: int
) -> None:
    for index in range(flushers):
        dsh_pm.register(Flush(), f"flush{index}")
    with pytest.raises(HookError) as info:
        await dsh_pm.relay.session_flush(Session("s"))
    assert info.value.plugin == f"flush{flushers - 1}"  # the last registered runs first
    assert info.value.hook == "session_flush"
    assert f"TypeError: returned coroutine from a plain def; {FIX}" in str(info.value)
    assert_no_coroutine_left_unawaited()


@pytest.mark.parametrize("beside", [None, "async"], ids=["sync-observers", "with-an-async-one"])
async def test_an_observer_returning_a_coroutine_is_reported_and_the_turn_goes_on(
    beside: str | None,
) -> None:
    seen: list[str] = []

    class AsyncObserver:
        @hookimpl
        async def session_event(self, event: Any) -> None:
            seen.append(event.type)

    reported: list[HookError] = []
    plugins: list[Any] = [("observe", Observe())]
    if beside:
        plugins.append(("async-observer", AsyncObserver()))
    pm = PluginManager(reported.append)
    async with scripted_harness(ScriptedModel(["ok"]), plugins=plugins, pm=pm) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "hi")
    assert events[-1].data["reason"] == "completed"
    assert reported and {(e.plugin, e.hook) for e in reported} == {("observe", "session_event")}
    assert FIX in str(reported[0])
    assert ("turn/end" in seen) == bool(beside)
    assert_no_coroutine_left_unawaited()


async def test_a_waterfall_impl_returning_a_coroutine_ends_the_turn_saying_why() -> None:
    async with scripted_harness(
        ScriptedModel([]), plugins=[("request", Request())], load_entry_points=False
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "hi")
    error = events[-1].data["error"]
    assert (error["plugin"], error["hook"]) == ("request", "agent_request")
    assert f"returned coroutine from a plain def; {FIX}" in error["message"]
    assert_no_coroutine_left_unawaited()


async def test_a_notification_returning_a_coroutine_is_reported(dsh_pm: PluginManager) -> None:
    reported: list[HookError] = []
    dsh_pm.dispatcher.report = reported.append
    dsh_pm.register(Stopping(), "stopping")
    await dsh_pm.relay.harness_stopping(None)  # type: ignore[arg-type]
    assert [(e.plugin, e.hook) for e in reported] == [("stopping", "harness_stopping")]
    assert FIX in str(reported[0])
    assert_no_coroutine_left_unawaited()


async def test_a_collected_result_that_is_a_coroutine_fails_the_call(
    dsh_pm: PluginManager,
) -> None:
    class Collected:
        @hookimpl(specname="agent_request")
        def anything(self, request: Any) -> Any:
            return later("collected")

    dsh_pm.register(Collected(), "collected")
    with pytest.raises(HookError, match=FIX):
        await dsh_pm.relay.call_collect("agent_request", agent=None, request=None, turn=1, step=1)
    assert_no_coroutine_left_unawaited()


async def test_a_plain_impl_returning_a_value_that_is_not_awaitable_is_unchanged(
    dsh_pm: PluginManager,
) -> None:
    class Value:
        @hookimpl
        def harness_stopping(self, harness: Any) -> Any:
            return 42  # ignored, as notification results always were

    reported: list[HookError] = []
    dsh_pm.dispatcher.report = reported.append
    dsh_pm.register(Value(), "value")
    with anyio.fail_after(5):
        await dsh_pm.relay.harness_stopping(None)  # type: ignore[arg-type]
    assert reported == []


@pytest.mark.parametrize("style", ["first_result", "waterfall"])
async def test_an_untyped_hook_of_a_plugin_refuses_a_coroutine_as_its_value(
    dsh_pm: PluginManager, style: str
) -> None:
    # a hook a plugin defines has no declared return type: a coroutine is not a value
    class Own:
        @hookimpl(specname="agent_request")
        def anything(self, request: Any) -> Any:
            return later("own")

    dsh_pm.register(Own(), "own")
    dsh_pm.dispatcher.returns.pop("agent_request", None)
    call = (
        dsh_pm.relay.call_first_result("agent_request", agent=None, request=None, turn=1, step=1)
        if style == "first_result"
        else dsh_pm.dispatcher.waterfall("agent_request", "request", {"request": None})
    )
    with pytest.raises(HookError, match=FIX):
        await call
    assert_no_coroutine_left_unawaited()


def test_a_register_impl_returning_a_coroutine_fails_start_up_naming_the_plugin(
    dsh_pm: PluginManager,
) -> None:
    # a register_* hook runs before any event loop: async def is refused, and a plain def
    # returning a coroutine registered nothing (its tools silently missing)
    class Tools:
        @hookimpl
        def register_tools(self, register: Any) -> Any:
            return later("tools")

    dsh_pm.register(Tools(), "tools")
    registered: list[Any] = []
    with pytest.raises(HookError) as info:
        dsh_pm.relay.register_tools(lambda plugin, *args, **kw: registered.append(args))
    assert (info.value.plugin, info.value.hook) == ("tools", "register_tools")
    assert str(info.value).endswith(
        "TypeError: returned coroutine; register_tools runs at start-up, before any event "
        "loop, so nothing would await it: call register(...) in the plain def itself"
    )
    assert registered == []
    assert_no_coroutine_left_unawaited()


# An ``async def`` impl that returns a coroutine unawaited (``return self.flush(...)``
# in an async impl, an ``await`` forgotten) is the same mistake the other way round: it
# is awaited, and what it gives is the coroutine. It used to be told "from a plain def;
# make the impl async def", which it is; now it is told to await the call, in every
# call style (the notifications and the flush used to drop it, never run).
AWAIT_IT = (
    "TypeError: returned coroutine from an async def without awaiting it; await it in "
    "the impl (return await ...)"
)


class AsyncImpls:
    @hookimpl
    async def agent_request(self, request: Any) -> Any:
        return later("request")

    @hookimpl
    async def tools_execute(self, call: Any) -> Any:
        return later("execute")

    @hookimpl
    async def session_flush(self, session: Any) -> Any:
        return later("flush")

    @hookimpl
    async def harness_stopping(self, harness: Any) -> Any:
        return later("stopping")

    @hookimpl(specname="agent_step_result")
    async def collected(self, message: Any) -> Any:
        return later("collected")


@pytest.mark.parametrize(
    "hook", ["agent_request", "tools_execute", "session_flush", "harness_stopping", "collect"]
)
async def test_an_async_impl_returning_a_coroutine_is_told_to_await_it(
    dsh_pm: PluginManager, hook: str
) -> None:
    from dsh import ModelRequest, ToolCall

    reported: list[HookError] = []
    dsh_pm.dispatcher.report = reported.append
    dsh_pm.register(AsyncImpls(), "forgot")
    relay = dsh_pm.relay
    calls = {
        "agent_request": lambda: relay.agent_request(None, ModelRequest(), turn=1, step=1),
        "tools_execute": lambda: relay.tools_execute(
            None, ToolCall(id="1", name="ls", arguments="{}"), turn=1, step=1
        ),
        "session_flush": lambda: relay.session_flush(Session("s")),
        "harness_stopping": lambda: relay.harness_stopping(None),  # type: ignore[arg-type]
        "collect": lambda: relay.call_collect(
            "agent_step_result", agent=None, message=None, turn=1, step=1
        ),
    }
    if hook in ("harness_stopping", "tools_execute"):  # reported; a call fails closed
        result = await calls[hook]()
        [error] = reported
        if hook == "tools_execute":
            assert result.is_error
            assert result.content.endswith(AWAIT_IT)
    else:
        with pytest.raises(HookError) as info:
            await calls[hook]()
        error = info.value
    assert (error.plugin, error.hook) == (
        "forgot",
        "agent_step_result" if hook == "collect" else hook,
    )
    assert str(error).endswith(AWAIT_IT)
    assert_no_coroutine_left_unawaited()


async def test_an_async_impl_returning_a_coroutine_in_a_turn_ends_it_saying_to_await() -> None:
    class Forgot:
        @hookimpl
        async def agent_request(self, request: Any) -> Any:
            return later("request")

    async with scripted_harness(
        ScriptedModel([]), plugins=[("forgot", Forgot())], load_entry_points=False
    ) as harness:
        agent = await harness.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "hi")
    error = events[-1].data["error"]
    assert (error["plugin"], error["hook"]) == ("forgot", "agent_request")
    assert error["message"].endswith(AWAIT_IT)
    assert "plain def" not in error["message"]
    assert_no_coroutine_left_unawaited()
