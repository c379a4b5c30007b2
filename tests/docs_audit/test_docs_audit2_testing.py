"""docs/testing.md and docs/writing-plugins.md on what dsh.testing's helpers and fixtures
do, as a plugin author relies on them."""

from __future__ import annotations

import asyncio
import inspect
import re
import types
from pathlib import Path
from typing import Any

import pytest
from docs_files import ROOT

from dsh import HookError, ModelRequest, hookimpl
from dsh.errors import PluginValidationError
from dsh.plugins import PluginManager, create_plugin_manager
from dsh.testing import HookRecorder, ScriptedModel, run_turn, scripted_harness, text, tool_calls


class Tagger:
    @hookimpl
    def agent_request(self, request: ModelRequest) -> ModelRequest:
        return request.model_copy(update={"system": request.system + "\nBe brief."})


@pytest.mark.plugins("persistence")
@pytest.mark.parametrize("named", [False, True])
async def test_an_installed_plugin_passed_again_is_refused_naming_its_distribution(
    named: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """testing.md:38-41: "your own plugin, once installed, is loaded by its entry point
    already, so pass it in `plugins` only with `load_entry_points=False` (its name would be
    taken twice: dsh says so, naming the distribution)"."""
    dsh_persistence = pytest.importorskip("dsh_persistence")
    monkeypatch.setenv("DSH_PERSISTENCE_DIR", str(tmp_path))
    plugin: Any = ("persistence", dsh_persistence) if named else dsh_persistence
    loaded = (
        "it is loaded already, as 'persistence', by the entry point of dsh-persistence; "
        "pass it only when you leave out the installed plugins"
    )
    with pytest.raises(PluginValidationError, match=re.escape(loaded)):
        async with scripted_harness(ScriptedModel(), plugins=[plugin]):
            pass


async def test_a_module_passed_alone_is_named_after_the_module() -> None:
    """testing.md:50-51: "a module passed alone is named after the module, `dsh_stamp`"."""
    dsh_stamp = types.ModuleType("dsh_stamp")
    async with scripted_harness(plugins=[dsh_stamp], load_entry_points=False) as h:
        assert h.pm.get_plugin("dsh_stamp") is dsh_stamp
        assert h.pm.get_name(dsh_stamp) == "dsh_stamp"


@pytest.fixture
def resolved(tmp_path: Path) -> Path:
    return tmp_path.resolve()


async def test_the_workspace_defaults_to_the_current_directory(
    resolved: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """testing.md:54-55: "`workspace` — the harness's directory ...; default: the current
    directory"."""
    monkeypatch.chdir(resolved)
    async with scripted_harness(load_entry_points=False) as h:
        assert Path(h.workspace) == resolved


async def test_a_lambda_entry_may_return_a_plain_string_or_a_reply(tmp_path: Path) -> None:
    """testing.md:69: "`lambda request: ...` | decides from the request (returns any of
    the above)"."""
    model = ScriptedModel(
        [
            lambda request: tool_calls(("ls", {"path": "."})),
            lambda request: f"saw {len(request.messages)} messages",
        ]
    )
    async with scripted_harness(model, load_entry_points=False, workspace=tmp_path) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "hi")
    assert [e.data["name"] for e in events if e.type == "tool/call"] == ["ls"]
    assert events[-1].data["reason"] == "completed"
    last = [e for e in events if e.type == "assistant/message"][-1]
    assert last.data["message"]["content"] == [{"type": "text", "text": "saw 3 messages"}]
    model.assert_complete()


async def test_a_tryfirst_plugin_registered_after_the_recorder_runs_after_it(
    dsh_pm: PluginManager, dsh_register: Any, dsh_hook_recorder: HookRecorder
) -> None:
    """writing-plugins.md: the fixture runs the recorder's impls "before every other
    plugin's, `tryfirst` ones registered later included: a waterfall value is recorded
    as the first impl saw it" (pluggy alone would call the later-registered impl first)."""

    class Early:
        @hookimpl(tryfirst=True)
        def agent_request(self, request: ModelRequest) -> ModelRequest:
            return request.model_copy(update={"system": "changed"})

    dsh_register(Early(), "early")
    out = await dsh_pm.relay.agent_request(None, ModelRequest(system="Hi."), turn=1, step=1)  # type: ignore[arg-type]
    assert out.system == "changed"
    [call] = dsh_hook_recorder.get("agent_request")
    assert call.kwargs["request"].system == "Hi."


async def test_a_tryfirst_plugin_registered_before_the_recorder_runs_after_it(
    dsh_pm: PluginManager, dsh_register: Any
) -> None:
    """A recorder registered by hand (no fixture) runs in pluggy's order: recorded as
    the first impl saw it when it is the later `tryfirst` impl."""

    class Early:
        @hookimpl(tryfirst=True)
        def agent_request(self, request: ModelRequest) -> ModelRequest:
            return request.model_copy(update={"system": "changed"})

    dsh_register(Early(), "early")
    recorder = HookRecorder(dsh_pm)
    dsh_register(recorder, "recorder")
    out = await dsh_pm.relay.agent_request(None, ModelRequest(system="Hi."), turn=1, step=1)  # type: ignore[arg-type]
    assert out.system == "changed"
    [call] = recorder.get("agent_request")
    assert call.kwargs["request"].system == "Hi."


@pytest.mark.parametrize(
    ("hook", "value"),
    [("agent_request", {"system": "oops"}), ("agent_turn_continuation", "stop")],
)
async def test_the_relay_of_dsh_pm_refuses_a_wrong_return_type_as_the_loop_does(
    dsh_pm: PluginManager, dsh_register: Any, hook: str, value: object
) -> None:
    """writing-plugins.md:176-177: "The plugin manager calls hooks through `dsh_pm.relay`
    ... It uses the same call style (waterfall, firstresult, and so on) as the agent loop";
    hooks.md:77-81: "An impl of an interception hook that returns neither None nor the
    model its hook expects ... has failed the same way, with a `TypeError` as the cause"."""
    from dsh import ContinuationDecision

    plugin = type("Wrong", (), {hook: hookimpl(lambda self: value)})()
    dsh_register(plugin, "wrong")
    relay: Any = dsh_pm.relay
    if hook == "agent_request":
        call = relay.agent_request(None, ModelRequest(), turn=1, step=1)
    else:
        call = relay.agent_turn_continuation(None, ContinuationDecision(action="stop"), 1, 1)
    with pytest.raises(HookError) as caught:
        await call
    assert caught.value.plugin == "wrong" and isinstance(caught.value.cause, TypeError)


async def test_the_first_example_of_the_page_passes_as_written() -> None:
    """testing.md:26-32: the `Tagger` example: `model.requests[0].system.endswith("Be
    brief.")` after one turn, and `model.assert_complete()`."""
    model = ScriptedModel([text("o", "k")])
    async with scripted_harness(model, plugins=[Tagger()], load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        events = await run_turn(agent, "hi")
    assert model.requests[0].system.endswith("Be brief.")
    model.assert_complete()
    chunks = [e.data["text"] for e in events if e.data.get("kind") == "text"]
    assert chunks == ["o", "k"]  # testing.md:64: "one chunk per part"


def test_relay_methods_are_awaited_not_passed_to_asyncio_run() -> None:
    """testing.md: "`await` its methods: what one returns while no plugin implements the
    hook is an awaitable but not a coroutine, which `asyncio.run()` and
    `asyncio.create_task()` refuse (wrap the call in an `async def` for those)"."""
    text = " ".join((ROOT / "docs" / "testing.md").read_text(encoding="utf-8").split())
    assert (
        "`await` its methods: what one returns while no plugin implements the hook is an "
        "awaitable but not a coroutine, which `asyncio.run()` and `asyncio.create_task()` "
        "refuse (wrap the call in an `async def` for those)"
    ) in text
    pm = create_plugin_manager(load_entry_points=False)
    returned = pm.relay.agent_request(None, ModelRequest(system="s"), 1, 1)
    assert not inspect.iscoroutine(returned)
    with pytest.raises((TypeError, ValueError), match="coroutine"):
        asyncio.run(returned)  # type: ignore[arg-type]

    async def wrapped() -> ModelRequest:
        return await pm.relay.agent_request(None, ModelRequest(system="s"), 1, 1)

    assert asyncio.run(wrapped()).system == "s"
