"""Re-review of the permissions plugin (s43): a deny pattern with a wildcard before a
symlinked directory, the split budget of a whole call, backslashes in rule patterns,
and the NTFS short name of ``.hg``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from permissions_util import Layout

from dsh import ToolCall
from dsh.tools import tool
from dsh_permissions import _splits
from dsh_permissions._calls import subjects_of
from dsh_permissions._shell import Command
from dsh_permissions._shell import split as split_line
from dsh_permissions._splits import MAX_SPLIT
from dsh_permissions._subjects import Subject, ToolFacts

pytestmark = pytest.mark.plugins("permissions")


@pytest.fixture
def vault(layout: Layout) -> Layout:
    """``ws/secrets`` and ``ws/x/keys`` lead to ``vault``, outside the workspace."""
    (layout.root / "vault").mkdir()
    (layout.root / "vault" / "k").write_text("k\n")
    (layout.ws / "secrets").symlink_to(layout.root / "vault")
    (layout.ws / "x").mkdir()
    (layout.ws / "x" / "keys").symlink_to("../../vault")
    return layout


@pytest.mark.parametrize(
    ("rule", "path"),
    [
        ("read(**/secrets/**)", "secrets/k"),
        ("read(secrets/**)", "secrets/k"),
        ("read(*/keys/**)", "x/keys/k"),
        ("read(**/keys/**)", "x/keys/k"),
        ("read(**/keys/**)", "./x/../x/keys/k"),
    ],
)
@pytest.mark.parametrize("tool", ["read", "bash"])
async def test_a_wildcard_deny_rule_sees_a_symlinked_directory_by_its_name(
    judge: Any, vault: Layout, rule: str, path: str, tool: str
) -> None:
    arguments = {"path": path} if tool == "read" else {"command": f"cat {path}"}
    judged = await judge({"deny": [rule], "allow": ["bash", "read"]}, tool, arguments)
    assert judged.decision == "deny", judged.event["reason"]


async def test_an_allow_rule_is_not_widened_by_the_name(judge: Any, vault: Layout) -> None:
    # the name as written is a deny reading only: write(**/secrets/**) does not reach vault
    arguments = {"path": "secrets/k", "content": "x"}
    judged = await judge({"allow": ["write(**/secrets/**)"]}, "write", arguments)
    assert judged.decision == "ask", judged.event["reason"]


@tool(mutating=True, command_args=("commands",))
def runall(commands: list[str]) -> str:
    """Runs each command."""
    return "ran"


def _subjects(layout: Layout, commands: list[str]) -> list[Subject]:
    call = ToolCall(id="c", name="runall", arguments=json.dumps({"commands": commands}))
    return subjects_of(ToolFacts.of("runall", runall), runall, call, str(layout.ws), reads=True)


def test_a_line_given_twice_in_a_call_is_split_once(
    layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line given again in one call is split (and checked) once."""
    counted: list[str] = []

    def counting(line: str) -> list[Command]:
        counted.append(line)
        return split_line(line)

    monkeypatch.setattr(_splits, "split_line", counting)
    line = "cat " + "x " * 10
    found = _subjects(layout, [line] * 20)
    assert counted == [line] and not [s for s in found if s.problem]


def test_lines_within_the_budget_alone_are_asked_about_together(layout: Layout) -> None:
    """The lines of one call share one split budget (20 lines of 64 KB took 34 s)."""
    lines = [f"cat {i} " + "x " * (MAX_SPLIT // 6) for i in range(3)]
    assert all(len(one) < MAX_SPLIT for one in lines)
    found = _subjects(layout, lines)
    assert [s for s in found if s.problem and "more than" in s.problem]


@pytest.mark.parametrize("tool", ["read", "bash"])
async def test_a_link_to_the_symlinked_directory_is_followed_one_step_at_a_time(
    judge: Any, vault: Layout, tool: str
) -> None:
    """``s -> secrets -> vault``: neither ``s/k`` as written nor ``vault/k`` is
    ``**/secrets/**``; ``secrets/k``, on the way, is."""
    (vault.ws / "s").symlink_to("secrets")
    arguments = {"path": "s/k"} if tool == "read" else {"command": "cat s/k"}
    rules = {"deny": ["read(**/secrets/**)"], "allow": ["bash", "read"]}
    judged = await judge(rules, tool, arguments)
    assert judged.decision == "deny", judged.event["reason"]
