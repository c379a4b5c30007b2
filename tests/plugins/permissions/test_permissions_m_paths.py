"""Path patterns and canonical paths, pinned where a hand mutation review of
``_paths`` found no test (behaviour 49: a rule matches the file a value names)."""

from __future__ import annotations

import pytest

from dsh_permissions._commands import command_subjects
from dsh_permissions._paths import PathPattern

pytestmark = pytest.mark.plugins("permissions")


async def test_a_rule_about_every_absolute_path_covers_every_path(judge):
    """``/**`` has no literal directory before its ``**``, so the ``**`` is the first
    component: it must still match one component and more (``read(/**)`` is the
    example of docs/permissions.md, Limits)."""
    assert PathPattern.compile("/**", "/nowhere").matches("/etc")
    assert PathPattern.compile("/**", "/nowhere").matches("/etc/passwd")
    judged = await judge({"deny": ["read(/**)"]}, "read", {"path": "src/a.py"})
    assert judged.decision == "deny", judged.event["reason"]
    judged = await judge({"ask": ["read(/**)"]}, "read", {"path": "/etc/hostname"})
    assert judged.decision == "ask", judged.event["reason"]


@pytest.mark.parametrize(
    ("pattern", "path"),
    [
        ("src/*/", "src/new"),
        ("src/*/.", "src/new"),
        ("src/**//a.py", "src/a.py"),
        ("src/**/./a.py", "src/a.py"),
    ],
)
async def test_empty_and_dot_components_after_a_wildcard_are_ignored(judge, pattern, path):
    """A trailing ``/``, a doubled ``/`` or a ``.`` component after a wildcard names the
    same files as the pattern without it (as in the literal part, which is resolved):
    a deny rule written so is not silently ineffective."""
    judged = await judge({"deny": [f"write({pattern})"]}, "write", {"path": path})
    assert judged.decision == "deny", judged.event["reason"]


async def test_a_pattern_starting_with_a_tilde_name_is_a_workspace_path(judge, layout):
    """Only ``~`` and ``~/...`` are the home directory; a directory named ``~old`` in
    the workspace, as the file tools take ``~old/notes.txt``, is written ``./~old/**``
    (``~old/**`` stops the harness at start: see test_permissions_rule_refusals)."""
    (layout.ws / "~old").mkdir()
    judged = await judge({"deny": ["write(./~old/**)"]}, "write", {"path": "~old/notes.txt"})
    assert judged.decision == "deny", judged.event["reason"]


async def test_a_sibling_whose_name_extends_the_workspace_name_is_outside(judge, layout):
    """``<root>/wsx`` is not inside the workspace ``<root>/ws``: a command naming it is
    matched by its absolute path, not as ``x/...`` relative to the workspace, so a
    rule about the workspace's ``x/`` does not allow it."""
    sibling = layout.root / "wsx"
    sibling.mkdir()
    (sibling / "secret.txt").write_text("x\n")
    (subject,) = command_subjects("cat ../wsx/secret.txt", str(layout.ws))
    assert subject.value == f"cat {sibling}/secret.txt"
    rules = {"allow": ["bash(cat x/*)"]}
    judged = await judge(rules, "bash", {"command": "cat ../wsx/secret.txt"})
    assert judged.decision == "ask", judged.event["reason"]
    # accept-edits: a file edit in the sibling is not an edit inside the workspace
    judged = await judge({}, "write", {"path": "../wsx/secret.txt"}, mode="accept-edits")
    assert judged.decision == "ask", judged.event["reason"]
