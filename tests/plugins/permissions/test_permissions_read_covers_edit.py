"""A rule that keeps a file from being read (deny or ask on ``read``) keeps ``edit`` out
of it too: edit reads the file, and its answers (whether ``old`` occurs, on which line,
how many times) let a model learn the file a guess at a time without changing it.
``write`` reads nothing (it says only whether it created or overwrote the file), so
read rules leave it alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from permissions_turns import real_turn

pytestmark = pytest.mark.plugins("permissions")

SECRET = "TOKEN=s3cr3t\n"


async def results(
    workspace: Path, rules: dict[str, Any], *steps: tuple[str, dict[str, Any]]
) -> list[str]:
    """What the model read back from each call, one call per step (an asked call is
    refused)."""
    return (await real_turn(workspace, rules, steps)).results


def guess(old: str) -> tuple[str, dict[str, Any]]:
    """An edit that never changes the file: its answer only says where ``old``'s first
    line occurs."""
    return "edit", {"path": ".env", "old": old + "\n\x01no such line", "new": "x"}


@pytest.mark.parametrize("action", ["deny", "ask"])
async def test_a_read_rule_keeps_edit_from_answering_guesses(tmp_path: Path, action: str) -> None:
    (tmp_path / ".env").write_text(SECRET)
    rules = {"mode": "accept-edits", action: ["read(.env)"]}
    right, wrong = await results(tmp_path, rules, guess("TOKEN=s3"), guess("TOKEN=x"))
    assert right.startswith("Permission denied"), right
    assert "occurs" not in right and "occurs" not in wrong
    assert right == wrong.replace("'TOKEN=x", "'TOKEN=s3")  # nothing tells them apart
    assert (tmp_path / ".env").read_text() == SECRET


async def test_an_allow_rule_for_edit_does_not_lift_a_read_deny(tmp_path: Path) -> None:
    # the quick start's shape: edits in src are allowed, one file there is not read
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "secrets.py").write_text("API_KEY = 'k9x'\n")
    (tmp_path / "src" / "app.py").write_text("DEBUG = False\n")
    rules = {"allow": ["edit(src/**)"], "deny": ["read(src/secrets.py)"]}
    steps = [
        ("edit", {"path": "src/secrets.py", "old": "API_KEY = 'k\n\x01", "new": "x"}),
        ("edit", {"path": "src/../src/secrets.py", "old": "API_KEY", "new": "KEY"}),
        ("edit", {"path": "src/app.py", "old": "False", "new": "True"}),
    ]
    oracle, spelt, other = await results(tmp_path, rules, *steps)
    assert oracle.startswith("Permission denied") and "occurs" not in oracle
    assert spelt.startswith("Permission denied")
    assert other.startswith("edited src/app.py")  # the rule covers only the file it names
    assert (tmp_path / "src" / "secrets.py").read_text() == "API_KEY = 'k9x'\n"


async def test_write_is_left_to_its_own_rules(tmp_path: Path) -> None:
    # write reveals nothing of what it replaces: a read rule does not stop it
    (tmp_path / ".env").write_text(SECRET)
    rules = {"mode": "accept-edits", "deny": ["read(.env)"]}
    (done,) = await results(tmp_path, rules, ("write", {"path": ".env", "content": "A=1\n"}))
    assert done.startswith("overwrote .env"), done
    assert "s3cr3t" not in done


async def test_allowing_read_does_not_allow_edit(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text(SECRET)
    rules = {"mode": "accept-edits", "allow": ["read(.env)"], "deny": ["edit(.env)"]}
    (found,) = await results(tmp_path, rules, guess("TOKEN"))
    assert found.startswith("Permission denied")
