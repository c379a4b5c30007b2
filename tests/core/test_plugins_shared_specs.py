"""Plugins sharing one ``dsh_hookspecs`` (two entry points of one distribution, say)
register, as does a plugin registered again; a hook specified twice, or a core hook
specified again, is refused naming both plugins."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from dsh import PluginValidationError, create_plugin_manager, hookimpl, hookspec
from dsh.plugins import list_plugins

Install = Callable[..., None]  # the `install` fixture of tests/core/conftest.py


@hookspec(firstresult=True)
def allowlisted(agent: object, call: object) -> bool | None:
    """Whether a tool call is on a list."""


def specs_module(name: str = "dsh_ss_specs") -> types.ModuleType:
    specs = types.ModuleType(name)
    specs.allowlisted = allowlisted  # type: ignore[attr-defined]
    return specs


def plugin(name: str, specs: object) -> types.ModuleType:
    module = types.ModuleType(name)
    module.dsh_hookspecs = specs  # type: ignore[attr-defined]
    return module


def test_two_plugins_sharing_one_specs_module_both_register() -> None:
    specs = specs_module()
    pm = create_plugin_manager(
        [("a", plugin("a", specs)), ("b", plugin("b", specs))], load_entry_points=False
    )
    assert pm.get_plugin("a") is not None and pm.get_plugin("b") is not None
    assert pm.hook.allowlisted.spec is not None
    assert pm.hook.allowlisted.spec.namespace is specs


def test_a_plugin_unregistered_and_registered_again_is_registered() -> None:
    a = plugin("a", specs_module())
    pm = create_plugin_manager([("a", a)], load_entry_points=False)
    pm.unregister(name="a")
    assert pm.register(a, "a") == "a"


def test_two_plugins_sharing_one_specs_instance_both_register() -> None:
    """An instance as ``dsh_hookspecs``: its methods are new objects at each lookup."""

    class Specs:
        @hookspec(firstresult=True)
        def shared_instance_hook(self, agent: object) -> bool | None:
            """A hook of the instance's."""

    specs = Specs()
    pm = create_plugin_manager(
        [("a", plugin("a", specs)), ("b", plugin("b", specs))], load_entry_points=False
    )
    assert pm.get_plugin("b") is not None
    assert pm.hook.shared_instance_hook.spec is not None


def test_a_spec_function_imported_into_another_specs_module_is_the_same_spec() -> None:
    """``from dsh_allowlist.hookspecs import allowlisted`` in another plugin's specs."""
    pm = create_plugin_manager(
        [("a", plugin("a", specs_module("one"))), ("b", plugin("b", specs_module("two")))],
        load_entry_points=False,
    )
    assert pm.get_plugin("b") is not None


class Other:
    @hookspec
    def allowlisted(self, agent: object, call: object, reason: str) -> bool | None:
        """Another plugin's hook of the same name."""


def test_another_spec_of_the_same_hook_is_refused_naming_both_plugins() -> None:
    with pytest.raises(PluginValidationError) as info:
        create_plugin_manager(
            [("a", plugin("a", specs_module())), ("b", plugin("b", Other))],
            load_entry_points=False,
        )
    assert info.value.plugin == "b"
    assert str(info.value) == (
        "plugin 'b': its dsh_hookspecs (test_plugins_shared_specs.Other) specify the hook "
        "'allowlisted', which plugin 'a' specified already (in dsh_ss_specs); a hook has "
        "one spec: give one of them another name, or have both plugins use one module as "
        "dsh_hookspecs"
    )


class CoreAgain:
    @hookspec
    def agent_request(self, agent: object, request: object, extra: object) -> object:
        """dsh-core's hook, specified again."""


def test_a_core_hook_specified_again_is_refused() -> None:
    pm = create_plugin_manager(load_entry_points=False)
    with pytest.raises(PluginValidationError) as info:
        pm.register(plugin("dup", CoreAgain), "dup")
    assert str(info.value) == (
        "plugin 'dup': its dsh_hookspecs (test_plugins_shared_specs.CoreAgain) specify the "
        "hook 'agent_request', which is dsh-core's own; give the plugin's hook another name "
        "(implementing a core hook takes no spec)"
    )
    assert pm.get_plugin("dup") is None


class Mixed:
    @hookspec
    def mixed_new(self, agent: object) -> None:
        """A new hook, added only if the plugin registers."""

    @hookspec
    def agent_request(self, agent: object, request: object) -> object:
        """dsh-core's hook, specified again."""


def test_a_refused_specs_namespace_adds_none_of_its_hooks() -> None:
    pm = create_plugin_manager(load_entry_points=False)
    with pytest.raises(PluginValidationError):
        pm.register(plugin("mixed", Mixed), "mixed")
    assert getattr(pm.hook, "mixed_new", None) is None


SPECS = """
from dsh import hookspec


@hookspec(firstresult=True)
def allowlisted(agent, call):
    "Whether a tool call is on a list."
"""
USER = """
from dsh import hookimpl
import dsh_ss_specs as dsh_hookspecs


@hookimpl
def allowlisted(call):
    return None
"""


@pytest.fixture
def shared_specs(tmp_path: Path) -> Iterator[None]:
    (tmp_path / "dsh_ss_specs.py").write_text(SPECS)
    yield
    sys.modules.pop("dsh_ss_specs", None)


@pytest.mark.usefixtures("shared_specs")
def test_installed_plugins_sharing_a_specs_module_both_load(
    install: Install, monkeypatch: pytest.MonkeyPatch
) -> None:
    install("dsh-ss-one", "one", "dsh_ss_one", USER)
    install("dsh-ss-two", "two", "dsh_ss_two", USER)
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "one,two")
    pm = create_plugin_manager()
    hooks = {info.name: info.hooks for info in list_plugins(pm)}
    assert hooks["one"] == hooks["two"] == ("allowlisted",)


class Impl:
    @hookimpl
    def allowlisted(self, call: object) -> bool:
        return True


def test_impls_of_a_shared_hook_are_called() -> None:
    specs = specs_module()
    pm = create_plugin_manager(
        [("a", plugin("a", specs)), ("b", plugin("b", specs)), ("impl", Impl())],
        load_entry_points=False,
    )
    assert pm.hook.allowlisted(agent=None, call=None) is True
