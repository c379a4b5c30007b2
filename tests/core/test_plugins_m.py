"""The plugin manager and plugin commands, tested against hand-made mutants of
``dsh.plugins`` and ``dsh.cli``: which plugin a validation error names, ``specname``,
impls of hooks nobody specified, selection through the environment, duplicate entry
points, the listing, and the checks on commands that plugins register."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import pytest
from test_plugins import Install

import dsh._entry_points
import dsh.plugins
from dsh import (
    DshError,
    ModelRequest,
    PluginLoadError,
    PluginValidationError,
    create_plugin_manager,
    hookimpl,
    hookspec,
    list_plugins,
)
from dsh.cli import main
from dsh.commands import Command
from dsh.plugins import PluginManager


def names(pm: PluginManager) -> list[str]:
    return [info.name for info in list_plugins(pm)]


# -- validation at registration ----------------------------------------------------


def test_a_validation_error_names_the_plugin_being_registered(dsh_pm: PluginManager) -> None:
    """Mutant: the error names ``repr(plugin)`` instead of the name it is registered as."""

    class Typo:
        @hookimpl
        def agent_reqest(self) -> None: ...

    with pytest.raises(PluginValidationError) as info:
        dsh_pm.register(Typo(), "typo")
    assert (info.value.plugin, info.value.code) == ("typo", "PLUGIN_INVALID")
    assert str(info.value).startswith("plugin 'typo': agent_reqest: unknown hook")


def test_a_plugin_registered_without_a_name_is_named_by_its_canonical_name(
    dsh_pm: PluginManager,
) -> None:
    """Mutant: without an explicit name, the error falls back to ``repr(plugin)``."""
    module = types.ModuleType("dsh_m_typo_plugin")

    def agent_reqest() -> None: ...

    module.agent_reqest = hookimpl(agent_reqest)  # type: ignore[attr-defined]
    with pytest.raises(PluginValidationError) as info:
        dsh_pm.register(module)
    assert info.value.plugin == "dsh_m_typo_plugin"


def test_an_impl_of_a_hook_nobody_specified_needs_optionalhook_even_when_another_has_one(
    dsh_pm: PluginManager,
) -> None:
    """Mutant: only a hook with no caller at all counts as unknown; an optionalhook impl
    creates a spec-less caller, which then let a plain impl of the typo through."""

    class Optional:
        @hookimpl(optionalhook=True)
        def approval_answer(self) -> None: ...

    class Plain:
        @hookimpl
        def approval_answer(self) -> None: ...

    dsh_pm.register(Optional(), "optional")
    with pytest.raises(PluginValidationError, match="unknown hook 'approval_answer'"):
        dsh_pm.register(Plain(), "plain")
    assert dsh_pm.get_plugin("plain") is None


async def test_specname_names_the_hook(dsh_pm: PluginManager) -> None:
    """Mutant: the hook checked is the function's name, not its ``specname``."""

    class Plugin:
        @hookimpl(specname="agent_request")
        def shout(self, request: ModelRequest) -> ModelRequest:
            return request.model_copy(update={"system": request.system.upper()})

    dsh_pm.register(Plugin(), "shout")
    result = await dsh_pm.relay.agent_request(
        agent=None,  # type: ignore[arg-type]
        request=ModelRequest(system="quiet"),
        turn=1,
        step=1,
    )
    assert result.system == "QUIET"


def test_an_async_register_impl_is_refused_under_a_specname(dsh_pm: PluginManager) -> None:
    """Mutant: the start-up check looks up the call style of the function's name."""

    class Plugin:
        @hookimpl(specname="register_tools")
        async def tools(self, register: Any) -> None: ...

    with pytest.raises(PluginValidationError, match="tools: register_tools runs at start-up"):
        dsh_pm.register(Plugin(), "p")


def test_the_hooks_a_plugin_implements_are_listed_sorted(dsh_pm: PluginManager) -> None:
    """Mutant: hooks in the manager's order (core specs before a plugin's own)."""

    class Specs:
        @staticmethod
        @hookspec
        def aaa_custom() -> None: ...

    class Plugin:
        dsh_hookspecs = Specs

        @hookimpl
        def session_event(self) -> None: ...

        @hookimpl
        def aaa_custom(self) -> None: ...

    dsh_pm.register(Plugin(), "p")
    (info,) = [i for i in list_plugins(dsh_pm) if i.name == "p"]
    assert info.hooks == ("aaa_custom", "session_event")


# -- selection -----------------------------------------------------------------------


def test_load_plugins_tolerates_spaces_and_empty_items(install: Install) -> None:
    """Mutant: ``DSH_LOAD_PLUGINS`` split on commas without stripping."""
    install("dsh-a", "a", "dsh_m_a_mod")
    install("dsh-b", "b", "dsh_m_b_mod")
    loaded = names(create_plugin_manager(env={"DSH_LOAD_PLUGINS": " a , b ,, "}))
    assert loaded[-2:] == ["a", "b"]


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "yes", "On"])
def test_every_spelling_of_true_disables_autoload(install: Install, value: str) -> None:
    """Mutants: the value compared without ``.lower()``; fewer accepted spellings."""
    install("dsh-a", "a", "dsh_m_a_mod")
    assert "a" not in names(create_plugin_manager(env={"DSH_DISABLE_PLUGIN_AUTOLOAD": value}))


def test_a_plugin_seen_twice_from_the_same_place_loads_once(install: Install) -> None:
    """Mutant: the duplicate check flipped (same target refused, different allowed)."""
    install("dsh-same-one", "same", "dsh_m_same_mod")
    install("dsh-same-two", "same", "dsh_m_same_mod")
    assert names(create_plugin_manager(env={"DSH_LOAD_PLUGINS": "same"})).count("same") == 1


def test_two_distributions_defining_one_plugin_name_is_an_error(install: Install) -> None:
    """Mutant: no duplicate check (the later distribution silently wins)."""
    install("dsh-dup-one", "dup", "dsh_m_dup_one")
    install("dsh-dup-two", "dup", "dsh_m_dup_two")
    with pytest.raises(DshError, match="two installed distributions define the dsh plugin 'dup'"):
        create_plugin_manager(env={})


def test_a_plugin_that_fails_to_load_is_a_plugin_load_error(install: Install) -> None:
    """Mutant: another error code (scripts and the CLI's JSON tell failures apart by it)."""
    install("dsh-broken", "broken", "dsh_m_broken_mod", "raise ImportError('half installed')\n")
    with pytest.raises(PluginLoadError) as info:
        create_plugin_manager(env={"DSH_LOAD_PLUGINS": "broken"})
    assert (info.value.code, info.value.name, info.value.distribution) == (
        "PLUGIN_LOAD",
        "broken",
        "dsh-broken",
    )
    assert isinstance(info.value.cause, ImportError)


def test_selection_and_plugins_may_be_given_as_iterators(install: Install) -> None:
    """Mutants: ``select`` or ``plugins`` used without copying, so the first pass over an
    iterator (the core defaults' ``no:`` check, the explicit names) consumes it."""
    install("dsh-a", "a", "dsh_m_a_mod")

    class Explicit:
        @hookimpl
        def agent_request(self) -> None: ...

    pm = create_plugin_manager(
        iter([("explicit", Explicit())]), select=iter(["no:a"]), env={"DSH_LOAD_PLUGINS": ""}
    )
    assert pm.is_blocked("a")
    assert names(pm)[-1] == "explicit"


def test_with_nothing_installed_the_errors_say_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutants: the ``or "none"`` dropped from either "installed" list."""
    monkeypatch.setattr(dsh._entry_points, "entry_points", lambda group: [])
    with pytest.raises(DshError) as info:
        create_plugin_manager(select=["x"], env={})
    assert str(info.value) == "-p x: no plugin named x is installed (installed: none)"
    with pytest.raises(DshError) as info:
        create_plugin_manager(select=["no:x"], env={})
    assert str(info.value) == "-p no:x: no plugin named x is installed (installed: none)"


# -- commands that plugins register (dsh.cli) -----------------------------------------


def commands_plugin(*commands: object) -> object:
    class Plugin:
        @hookimpl
        def register_commands(self, register: Any) -> None:
            for command in commands:
                register(command)

    return Plugin()


def hello(context: object) -> int:
    return 0


@pytest.fixture
def only(monkeypatch: pytest.MonkeyPatch) -> Callable[..., None]:
    """Make ``dsh`` load just the given ``(name, plugin)`` pairs."""
    real = dsh.plugins.create_plugin_manager

    def only(*plugins: tuple[str, object]) -> None:
        monkeypatch.setattr(
            dsh.plugins,
            "create_plugin_manager",
            lambda **kw: real(list(plugins), load_entry_points=False),
        )

    return only


def test_a_command_named_like_a_built_in_one_is_refused(
    only: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    """Mutant: only clashes between plugins are checked."""
    only(("toys", commands_plugin(Command("run", "shadows dsh run", hello))))
    assert main(["plugins"]) == 2
    err = capsys.readouterr().err
    # the core's refusal as it is, not wrapped as the plugin failing in its hook
    assert err == "dsh: error: command 'run' is registered twice: by 'dsh-core' and 'toys'\n"


def test_a_command_registered_by_two_plugins_names_both(
    only: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    """Mutant: the message names the second plugin twice."""
    only(
        ("first", commands_plugin(Command("hello", "one", hello))),
        ("second", commands_plugin(Command("hello", "two", hello))),
    )
    assert main(["plugins"]) == 2
    # "second" was registered later, so its impl is called first
    err = capsys.readouterr().err
    assert err.endswith(": command 'hello' is registered twice: by 'second' and 'first'\n")


def test_registering_something_else_than_a_command_is_refused(
    only: Callable[..., None], capsys: pytest.CaptureFixture[str]
) -> None:
    """Mutant: anything is accepted as a command."""
    only(("toys", commands_plugin("hello")))
    assert main(["plugins"]) == 2
    err = capsys.readouterr().err
    assert err.endswith(": plugin 'toys' registered 'hello', which is not a dsh Command\n")


def test_turning_off_one_of_dshs_own_plugins_not_installed_is_taken(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``-p no:permissions`` with dsh-permissions not installed: no typo, and the way on
    with a session whose stored options are for it (they are refused otherwise)."""
    monkeypatch.setattr(dsh._entry_points, "entry_points", lambda group: [])
    pm = create_plugin_manager(select=["no:permissions"], env={})
    assert pm.is_blocked("permissions")
