"""Rules that would quietly match nothing stop the harness at start, saying where:
a path pattern spelt ``~user/...``, ``~+`` or ``~-`` (only ``~`` and ``~/`` are
expanded: ``deny: read(~root/.bashrc)`` named a directory ``~root`` in the workspace),
and a pattern whose parentheses do not balance (``bash(rm *))`` is the command
pattern ``rm *)``, which no command matches)."""

from __future__ import annotations

import getpass

import pytest

import dsh_permissions
from dsh import HookError
from dsh.errors import ConfigError
from dsh.testing import ScriptedModel, scripted_harness

pytestmark = pytest.mark.plugins("permissions")


async def _start(rule: str) -> None:
    async with scripted_harness(
        ScriptedModel([]),
        plugins=[("permissions", dsh_permissions)],
        load_entry_points=False,
        config_text=f"permissions:\n  deny: ['{rule}']\n",
    ):
        pass


async def refusal(rule: str) -> str:
    with pytest.raises(HookError) as caught:
        await _start(rule)
    return caught.value.for_user()


@pytest.mark.parametrize(
    ("rule", "first"),
    [
        (f"read(~{getpass.getuser()}/.bashrc)", f"~{getpass.getuser()}"),
        ("read(~root/.ssh/**)", "~root"),
        ("write(~root)", "~root"),
        ("edit(~+/src/**)", "~+"),
        ("read(~-/x)", "~-"),
    ],
)
async def test_a_tilde_user_pattern_stops_the_harness_saying_where(rule: str, first: str):
    said = await refusal(rule)
    assert said.startswith(f"<string>:2:10: permissions.deny[0]: rule {rule!r} has a bad path")
    assert f"{first!r} is not expanded in a path pattern" in said
    assert f"write the absolute path, ~/ for your own home directory, or ./{first} " in said


@pytest.mark.parametrize(
    "rule",
    ["read(~/.bashrc)", "read(~)", "read(./~old/**)", "read(src/~backup/**)", "bash(ls ~root)"],
)
async def test_home_patterns_and_tildes_elsewhere_are_accepted(rule: str):
    await _start(rule)


@pytest.mark.parametrize(
    ("rule", "pattern"),
    [
        ("bash(rm *))", "rm *)"),
        ("read(.env))", ".env)"),
        ("bash(echo $(date)", "echo $(date"),
        ("bash(a) b)", "a) b"),
    ],
)
async def test_unbalanced_parentheses_stop_the_harness_saying_where(rule: str, pattern: str):
    with pytest.raises(ConfigError) as caught:
        await _start(rule)
    said = str(caught.value)
    assert said.startswith(f"<string>:2:10: permissions.deny[0]: {rule!r}: ")
    assert f"the parentheses in the pattern {pattern!r} do not balance" in said


@pytest.mark.parametrize("rule", ["bash(echo $(date))", "bash(f (x) *)", "read(src/(a)/**)"])
async def test_balanced_parentheses_are_accepted(rule: str):
    await _start(rule)
