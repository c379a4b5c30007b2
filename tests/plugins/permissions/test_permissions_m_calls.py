"""From a call to its subjects, pinned where a hand mutation review of ``_subjects``
and ``_calls`` found no test: values that cannot name a file, how a path's readings
are shown, remembered and folded, and arguments left out."""

from __future__ import annotations

from typing import Any

import pytest

from dsh import ToolCall
from dsh.tools import tool
from dsh_permissions._calls import _THE_TOOL, subjects_of
from dsh_permissions._decide import Policy, decide
from dsh_permissions._paths import MAX_PATH
from dsh_permissions._settings import PermissionSettings
from dsh_permissions._subjects import ToolFacts, path_subject

pytestmark = pytest.mark.plugins("permissions")

WRITE = ToolFacts("write", True, True, ("path",))


@pytest.mark.parametrize(
    "path", ["", "notes\x00.txt", "a" * (MAX_PATH + 1)], ids=["empty", "nul", "too-long"]
)
async def test_a_path_that_cannot_name_a_file_is_asked_about_even_for_a_read(judge, path):
    """A value that cannot be checked is asked about, never allowed, even for a tool
    that changes nothing (docs/permissions.md: what cannot be checked asks)."""
    judged = await judge({"deny": ["read(.env)"]}, "read", {"path": path})
    assert judged.decision == "ask", judged.event["reason"]


async def test_a_folded_spelling_is_checked_for_every_reading(judge, layout):
    """``~/.env`` spelled with a full-width ``e`` names a file in a workspace
    directory ``~`` or one in the home directory; deny rules see both readings
    folded (NFKC), so a rule about the workspace's ``~/.env`` denies it."""
    (layout.ws / "~").mkdir()
    subject = path_subject("~/.\uff45nv", str(layout.ws))
    assert str(layout.ws / "~" / ".env") in subject.deny
    judged = await judge({"deny": ["read(./~/.env)"]}, "read", {"path": "~/.\uff45nv"})
    assert judged.decision == "deny", judged.event["reason"]


def test_a_grant_for_one_reading_does_not_allow_a_value_with_two(layout):
    """A path subject is shown and remembered as all its readings: allowing the
    workspace's ``./~/x`` for the session does not allow ``~/x``, which may also be
    the home directory's ``x``."""
    root = str(layout.ws)
    one = path_subject("./~/x", root)
    two = path_subject("~/x", root)
    assert one.value == str(layout.ws / "~" / "x")
    assert two.value.startswith(one.value + " | ")
    policy = Policy(PermissionSettings(), root)
    grants = {("write", "path", one.value)}
    assert decide(policy, "default", WRITE, [one], grants).decision == "allow"
    assert decide(policy, "default", WRITE, [two], grants).decision == "ask"


def test_a_path_argument_left_out_is_not_an_empty_path(layout):
    """An optional path argument the call leaves out (None) names nothing: the call
    is checked as the tool itself, not as an empty path that cannot be checked."""

    @tool(path_args=("path",))
    def grep(pattern: str, path: str | None = None) -> str:
        "Search."
        return ""

    facts = ToolFacts.of("grep", grep)
    call = ToolCall(id="c", name="grep", arguments='{"pattern": "x"}')
    assert subjects_of(facts, grep, call, str(layout.ws)) == [_THE_TOOL]


def test_arguments_are_read_as_the_tool_receives_them(layout):
    """The values checked are the tool's own (docs/permissions.md, Rules): defaults
    are filled in, and a list of ``Path`` values is a list of paths."""
    from pathlib import Path

    from dsh_permissions._calls import InvalidArguments

    @tool(mutating=True, path_args=("path",))
    def save(content: str, path: str = "src/out.txt") -> str:
        "Save."
        return ""

    @tool(mutating=True, path_args=("paths",))
    def touch(paths: list[Path]) -> str:
        "Touch files."
        return ""

    @tool(mutating=True, path_args=("count",))
    def odd(count: Any) -> str:  # (one typed int is refused when defined)
        "Takes anything as a path."
        return ""

    root = str(layout.ws)
    call = ToolCall(id="c", name="save", arguments='{"content": "x"}')
    (subject,) = subjects_of(ToolFacts.of("save", save), save, call, root)
    assert subject.value == str(layout.ws / "src" / "out.txt")
    call = ToolCall(id="c", name="touch", arguments='{"paths": ["src/a.py", ".env"]}')
    subjects = subjects_of(ToolFacts.of("touch", touch), touch, call, root)
    assert [s.value for s in subjects] == [str(layout.ws / "src/a.py"), str(layout.ws / ".env")]
    # a value that is not text cannot be checked: the call is refused, not let through
    call = ToolCall(id="c", name="odd", arguments='{"count": 3}')
    with pytest.raises(InvalidArguments, match="should hold text, not int"):
        subjects_of(ToolFacts.of("odd", odd), odd, call, root)
