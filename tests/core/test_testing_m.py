"""``dsh.testing``'s fixtures, ``HookRecorder``, ``scripted_harness`` and ``run_turn``,
as a plugin author relies on them (from a hand mutation review of dsh/testing)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from dsh import ModelRequest, hookimpl
from dsh.hookspecs import CALL_STYLES
from dsh.plugins import PluginManager, create_plugin_manager
from dsh.testing import HookRecorder, ScriptedModel, run_turn, scripted_harness, text

Register = Callable[..., str | None]
FAKE = "mtfake"  # the entry-point name of the fake installed plugin
CONFIG = "models:\n  cfg:\n    provider: openai-compatible\n    base_url: http://127.0.0.1:9/v1\n"


class Plain:
    """A plugin with no hooks: only its registration is looked at."""


class Tagger:
    @hookimpl
    def agent_request(self, request: ModelRequest) -> ModelRequest:
        return request.model_copy(update={"system": request.system + "+tag"})


@pytest.fixture
def fake_entry_point(install: Callable[..., None], monkeypatch: pytest.MonkeyPatch) -> str:
    """An installed dsh plugin (a dist-info on sys.path), the only one loaded by default."""
    install("mtfake", FAKE, "mtfake_plugin", "")
    monkeypatch.setenv("DSH_LOAD_PLUGINS", FAKE)
    monkeypatch.delenv("DSH_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    assert create_plugin_manager().get_plugin(FAKE) is not None  # the fake is installed
    return FAKE


# -- dsh_pm, dsh_register, dsh_hook_recorder ------------------------------------------


def test_dsh_pm_loads_no_entry_point(fake_entry_point: str, dsh_pm: PluginManager) -> None:
    assert dsh_pm.get_plugin(fake_entry_point) is None
    assert dsh_pm.get_plugin("dsh.builtins") is not None  # the core defaults are there


def test_dsh_register_registers_under_the_name_given_and_returns_it(
    dsh_pm: PluginManager, dsh_register: Register
) -> None:
    plugin, unnamed = Plain(), Plain()
    assert dsh_register(plugin, "mine") == "mine"
    assert dsh_pm.get_plugin("mine") is plugin
    name = dsh_register(unnamed)
    assert name is not None and dsh_pm.get_plugin(name) is unnamed


@pytest.fixture
def after_teardown(dsh_pm: PluginManager) -> Iterator[list[object]]:
    """Set up before (so torn down after) the fixtures a test asks for next: the plugins
    the test puts in the list must no longer be registered then."""
    plugins: list[object] = []
    yield plugins
    left = [plugin for plugin in plugins if dsh_pm.is_registered(plugin)]
    assert left == [], "still registered after the fixtures' teardown"


def test_dsh_register_unregisters_at_teardown(
    after_teardown: list[object], dsh_pm: PluginManager, dsh_register: Register
) -> None:
    first, second = Plain(), Plain()
    dsh_register(first, "first")
    dsh_register(second)
    after_teardown += [first, second]
    assert dsh_pm.is_registered(first) and dsh_pm.is_registered(second)


def test_a_plugin_the_test_unregistered_itself_does_not_break_the_teardown(
    dsh_pm: PluginManager, dsh_register: Register
) -> None:
    plugin = Plain()
    dsh_register(plugin, "gone")
    dsh_pm.unregister(plugin)  # the teardown must not try again (that raises)


def test_the_hook_recorder_is_named_in_dispatch_plans(
    dsh_hook_recorder: HookRecorder, dsh_pm: PluginManager
) -> None:
    assert dsh_pm.get_plugin("dsh-hook-recorder") is dsh_hook_recorder
    assert dsh_pm.dispatcher.plan("agent_request")[0].plugin_name == "dsh-hook-recorder"


def test_the_hook_recorder_is_unregistered_at_teardown(
    after_teardown: list[object], dsh_hook_recorder: HookRecorder, dsh_pm: PluginManager
) -> None:
    after_teardown.append(dsh_hook_recorder)
    assert dsh_pm.is_registered(dsh_hook_recorder)


async def test_the_hook_recorder_records_the_request_as_it_came_in(
    dsh_hook_recorder: HookRecorder, dsh_pm: PluginManager, dsh_register: Register
) -> None:
    dsh_register(Tagger(), "tagger")  # after the recorder: without tryfirst it runs first
    request = ModelRequest(system="base")
    out = await dsh_pm.relay.agent_request(agent=None, request=request, turn=1, step=1)  # type: ignore[arg-type]
    assert out.system == "base+tag"
    [call] = dsh_hook_recorder.get("agent_request")
    assert call.kwargs["request"] is request
    assert (call.kwargs["turn"], call.kwargs["step"]) == (1, 1)


async def test_the_hook_recorder_records_lifecycle_hooks_but_no_registration_hook(
    dsh_hook_recorder: HookRecorder, dsh_pm: PluginManager
) -> None:
    model = ScriptedModel(["hi"])
    async with scripted_harness(model, pm=dsh_pm) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "hello")
    names = set(dsh_hook_recorder.names())
    registration = {hook for hook, style in CALL_STYLES.items() if style == "register"}
    assert {"harness_started", "agent_created", "session_event", "harness_stopping"} <= names
    assert names & registration == set()


# -- scripted_harness ------------------------------------------------------------------


@pytest.fixture
def resolved(tmp_path: Path) -> Path:
    return tmp_path.resolve()


async def test_scripted_harness_registers_every_model_from_the_scripted_models_plugin() -> None:
    one, two = ScriptedModel(["1"], name="one"), ScriptedModel(["2"], name="two")
    async with scripted_harness(one, two, load_entry_points=False) as h:
        assert [(n, h.models.origin(n)) for n in ("one", "two")] == [
            ("one", "scripted-models"),
            ("two", "scripted-models"),
        ]
        agent = await h.agents.create("a", options={"model": "two"})
        await run_turn(agent, "go")
    assert (len(one.requests), len(two.requests)) == (0, 1)


async def test_scripted_harness_loads_entry_points_unless_told_not_to(
    fake_entry_point: str,
) -> None:
    async with scripted_harness(ScriptedModel()) as h:
        assert h.pm.get_plugin(fake_entry_point) is not None
    async with scripted_harness(ScriptedModel(), load_entry_points=False) as h:
        assert h.pm.get_plugin(fake_entry_point) is None


async def test_scripted_harness_passes_config_text_and_workspace(
    tmp_path: Path, resolved: Path
) -> None:
    model = ScriptedModel()
    async with scripted_harness(
        model, load_entry_points=False, config_text=CONFIG, workspace=tmp_path
    ) as h:
        assert h.workspace == resolved
        assert h.models.origin("cfg") == "config"  # built from config_text, never called


async def test_scripted_harness_on_a_given_pm_registers_the_plugins_by_name(
    tmp_path: Path, resolved: Path, dsh_pm: PluginManager
) -> None:
    named, unnamed, model = Plain(), Plain(), ScriptedModel(["ok"])
    plugins: list[Any] = [("named", named), unnamed]
    async with scripted_harness(
        model, plugins=plugins, pm=dsh_pm, config_text=CONFIG, workspace=tmp_path
    ) as h:
        assert h.pm is dsh_pm
        assert dsh_pm.get_plugin("named") is named and dsh_pm.is_registered(unnamed)
        assert h.models.origin("scripted") == "scripted-models"
        assert h.workspace == resolved
        assert h.models.origin("cfg") == "config"  # built from config_text, never called


# -- run_turn --------------------------------------------------------------------------


async def test_run_turn_returns_exactly_the_events_of_that_turn() -> None:
    model = ScriptedModel(["first", text("sec", "ond")])
    async with scripted_harness(model, load_entry_points=False) as h:
        agent = await h.agents.create("a", options={"model": "scripted"})
        await run_turn(agent, "one")
        before = len(agent.session.events)
        events = await run_turn(agent, "two")
        assert [e.to_dict() for e in events] == [e.to_dict() for e in agent.session.events[before:]]
    assert events[0].type == "turn/start" and events[0].data["turn"] == 2
    assert events[-1].type == "turn/end"
    model.assert_complete()
