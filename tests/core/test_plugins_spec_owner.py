"""A plugin's optionalhook impl of another plugin's own hook, registered before that
plugin brings the spec: an impl whose arguments do not fit is its own plugin's fault, and
the plugin bringing the spec loads."""

from __future__ import annotations

import json
import types
from collections.abc import Callable
from pathlib import Path

import pytest

from dsh import PluginLoadError, PluginValidationError, create_plugin_manager, hookimpl, hookspec
from dsh.testing import ScriptedModel, scripted_harness

Install = Callable[..., None]  # the `install` fixture of tests/core/conftest.py

SPECS = """
from dsh import hookspec


@hookspec(firstresult=True)
def allowlisted(agent, call, reason):
    "Whether a tool call is on a list."
"""
OWNER = "import dsh_so_specs as dsh_hookspecs\n"
TYPO = """
from dsh import hookimpl


@hookimpl(optionalhook=True)
def allowlisted(cal):
    return True
"""
WHY = (
    "allowlisted(cal): the hook has no argument 'cal'; an impl takes any of agent, call, "
    "reason (by name)"
)


class TypoArg:
    @hookimpl(optionalhook=True)
    def allowlisted(self, cal: object) -> bool:
        return True


def owner() -> types.ModuleType:
    specs = types.ModuleType("dsh_so_specs_explicit")

    @hookspec(firstresult=True)
    def allowlisted(agent: object, call: object, reason: str) -> bool | None:
        """Whether a tool call is on a list."""

    specs.allowlisted = allowlisted  # type: ignore[attr-defined]
    module = types.ModuleType("dsh_so_owner_explicit")
    module.dsh_hookspecs = specs  # type: ignore[attr-defined]
    return module


async def test_an_explicit_plugins_misfit_impl_is_blamed_on_it_not_on_the_spec_owner() -> None:
    with pytest.raises(PluginValidationError) as info:
        async with scripted_harness(
            ScriptedModel(["ok"]),
            plugins=[("typo", TypoArg()), ("allowlist", owner())],
            load_entry_points=False,
        ):
            pass
    assert info.value.plugin == "typo"
    assert str(info.value) == f"plugin 'typo': {WHY}"


def test_a_direct_register_of_the_spec_owner_is_refused_naming_the_misfit_plugin() -> None:
    """Outside the loaders (PluginManager.register, dsh_register, start_harness(pm=...)),
    no plugin is silently left out: the new one is refused, and nothing changes."""
    pm = create_plugin_manager(load_entry_points=False)
    typo, allowlist = TypoArg(), owner()
    pm.register(typo, "typo")
    with pytest.raises(PluginValidationError) as info:
        pm.register(allowlist, "allowlist")
    assert info.value.plugin == "typo"
    assert str(info.value) == (
        f"plugin 'typo': {WHY}; so 'allowlist', which specifies that hook, is not "
        "registered: fix 'typo', or unregister it first"
    )
    assert (pm.get_plugin("typo"), pm.get_plugin("allowlist")) == (typo, None)
    assert not pm.hook.allowlisted.has_spec() and pm._take_evicted() == []
    pm.unregister(typo)
    assert pm.register(allowlist, "allowlist") == "allowlist"


def test_the_spec_owner_stays_registered_and_the_misfit_one_is_left_out() -> None:
    pm = create_plugin_manager(load_entry_points=False)
    typo, allowlist = TypoArg(), owner()
    pm.register(typo, "typo")
    with pm._leaving_out_misfits():  # as the loaders register
        pm.register(allowlist, "allowlist")
    assert pm.get_plugin("allowlist") is allowlist
    assert pm.get_plugin("typo") is None
    assert [str(e) for e in pm._take_evicted()] == [f"plugin 'typo': {WHY}"]
    assert pm.hook.allowlisted.get_hookimpls() == []


def test_an_installed_misfit_impl_fails_its_own_plugin_and_dsh_plugins_lists_the_owner(
    install: Install,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from dsh.cli import main

    (tmp_path / "dsh_so_specs.py").write_text(SPECS)
    install("dsh-typo", "aaa", "dsh_so_typo", TYPO)  # loads first: names are sorted
    install("dsh-allow", "zallow", "dsh_so_owner", OWNER)
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "aaa,zallow")
    with pytest.raises(PluginLoadError) as info:
        create_plugin_manager()
    assert (info.value.name, info.value.more) == ("aaa", ())
    assert f"failed to load: PluginValidationError: plugin 'aaa': {WHY}\n" in str(info.value)

    assert main(["plugins", "--json"]) == 1
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["zallow"]["error"] is None
    assert rows["aaa"]["error"] == f"PluginValidationError: plugin 'aaa': {WHY}"
    assert main(["plugins"]) == 1
    out = capsys.readouterr().out
    assert f"failed to load: PluginValidationError: plugin 'aaa': {WHY}\n" in out
    assert "\nzallow " in out
