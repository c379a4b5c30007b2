"""``-p`` values (``select=``) and DSH_LOAD_PLUGINS: of ``-p NAME`` and ``-p no:NAME``
the last given wins, as in pytest; dsh-core's own plugins, which always load, may be
named as no-ops."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from dsh import create_plugin_manager
from dsh.plugins import CORE_DEFAULTS, PluginManager, list_plugins

Install = Callable[..., None]  # the `install` fixture of tests/core/conftest.py


def names(pm: PluginManager) -> list[str]:
    return [info.name for info in list_plugins(pm)]


def test_dash_p_after_dash_p_no_loads_the_plugin(install: Install) -> None:
    # it was left out without a word: -p no: won whatever the order
    install("dsh-a", "a", "dsh_sel_a")
    pm = create_plugin_manager(select=["no:a", "a"], env={"DSH_LOAD_PLUGINS": ""})
    assert "a" in names(pm) and not pm.is_blocked("a")


def test_dash_p_no_after_dash_p_blocks_the_plugin(install: Install) -> None:
    install("dsh-a", "a", "dsh_sel_a")
    pm = create_plugin_manager(select=["a", "no:a"], env={"DSH_LOAD_PLUGINS": "a"})
    assert "a" not in names(pm) and pm.is_blocked("a")


def test_a_core_plugin_blocked_then_named_loads() -> None:
    select = ["no:dsh.builtin_tools", "dsh.builtin_tools"]
    pm = create_plugin_manager(select=select, env={"DSH_LOAD_PLUGINS": ""})
    assert names(pm) == list(CORE_DEFAULTS)


@pytest.mark.parametrize(
    ("select", "env", "loads_a"),
    [
        (["dsh.builtins"], {"DSH_LOAD_PLUGINS": "a"}, True),
        (["dsh.builtin_tools", "a"], {"DSH_DISABLE_PLUGIN_AUTOLOAD": "1"}, True),
        ([], {"DSH_LOAD_PLUGINS": "dsh.builtin_tools"}, False),
        ([], {"DSH_LOAD_PLUGINS": "dsh.builtins,a,dsh.builtin_tools"}, True),
    ],
)
def test_the_cores_own_plugins_may_be_named_they_always_load(
    install: Install, select: list[str], env: dict[str, str], loads_a: bool
) -> None:
    # "no plugin named dsh.builtin_tools is installed", though `dsh plugins` lists it
    install("dsh-a", "a", "dsh_sel_a")
    pm = create_plugin_manager(select=select, env=env)
    assert names(pm) == [*CORE_DEFAULTS, *(["a"] if loads_a else [])]


def test_dash_p_on_the_command_line_last_wins_and_takes_core_names(
    install: Install, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dsh.cli import main

    install("dsh-a", "a", "dsh_sel_a")
    monkeypatch.setenv("DSH_LOAD_PLUGINS", "dsh.builtin_tools")
    assert main(["-p", "dsh.builtins", "-p", "no:a", "-p", "a", "plugins"]) == 0
    out = capsys.readouterr().out
    assert "\na " in out and "dsh.builtins" in out
