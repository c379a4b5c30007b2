"""What a path pattern's literal directories mean is decided on each call, from both the
pattern as written and where its directories lead now: a symlink the agent makes cannot
widen an allow rule, nor can replacing one narrow a deny rule. A deny or ask pattern
holding ``[...]`` also covers the file its text names."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from permissions_turns import real_turn

pytestmark = pytest.mark.plugins("permissions")

HOOK = "#!/bin/sh\necho pwned\n"


async def results(
    workspace: Path, rules: dict[str, Any], *steps: tuple[str, dict[str, Any]]
) -> list[str]:
    """What the model read back from each call, one call per step (an asked call is
    refused)."""
    return (await real_turn(workspace, rules, steps)).results


def write(path: str, content: str = "x") -> tuple[str, dict[str, Any]]:
    return "write", {"path": path, "content": content}


def bash(command: str) -> tuple[str, dict[str, Any]]:
    return "bash", {"command": command}


ALLOW_BUILD = {"allow": ["write(build/**)", "bash(ln -s *)"]}


@pytest.mark.parametrize("first", [False, True], ids=["link-first", "rule-used-first"])
async def test_a_symlink_the_agent_makes_does_not_widen_an_allow_rule(
    tmp_path: Path, first: bool
) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    steps = [bash("ln -s .git/hooks build"), write(".git/hooks/pre-commit", HOOK)]
    if first:  # the rule is used once before the link exists
        steps.insert(0, write("notes.txt"))
    found = await results(tmp_path, ALLOW_BUILD, *steps)
    assert (tmp_path / "build").is_symlink()
    assert found[-1].startswith("Permission denied"), found[-1]
    assert not (tmp_path / ".git" / "hooks" / "pre-commit").exists()


async def test_a_symlink_made_before_the_session_does_not_widen_it_either(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "build").symlink_to(".git/hooks")
    steps = [write(".git/hooks/pre-commit", HOOK), write("build/post-commit", HOOK)]
    with caplog.at_level(logging.WARNING, logger="dsh_permissions"):
        direct, through = await results(tmp_path, ALLOW_BUILD, *steps)
    assert direct.startswith("Permission denied"), direct
    assert through.startswith("Permission denied"), through
    assert list((tmp_path / ".git" / "hooks").iterdir()) == []
    # the person is told the rule matches nothing, and what to name instead
    (warned,) = [
        r.getMessage() for r in caplog.records if "allow: write(build/**)" in r.getMessage()
    ]
    assert "/build, which leads to " in warned and "/.git/hooks through a symlink" in warned


async def test_the_allow_rule_still_allows_its_own_directory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "build").mkdir()
    with caplog.at_level(logging.WARNING, logger="dsh_permissions"):
        found = await results(tmp_path, ALLOW_BUILD, write("build/out.txt"), write("build/new/x"))
    assert [f.split(" (")[0] for f in found] == ["created build/out.txt", "created build/new/x"]
    assert not [r for r in caplog.records if "symlink" in r.getMessage()]


async def test_replacing_a_symlinked_directory_does_not_narrow_a_deny_rule(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "vault").mkdir()
    (workspace / "secrets").symlink_to("../vault")
    rules = {
        "mode": "accept-edits",
        "deny": ["write(secrets/**)"],
        "allow": ["bash(unlink secrets)", "bash(mkdir secrets)"],
    }
    steps = [
        write("notes.txt"),  # the deny rule is used while secrets is a link
        write("secrets/x"),
        bash("unlink secrets && mkdir secrets"),
        write("secrets/planted"),
    ]
    notes, through, _, planted = await results(workspace, rules, *steps)
    assert notes.startswith("created notes.txt")
    assert through.startswith("Permission denied")
    assert (workspace / "secrets").is_dir() and not (workspace / "secrets").is_symlink()
    assert planted.startswith("Permission denied"), planted
    assert not (workspace / "secrets" / "planted").exists()


async def test_a_deny_rule_covers_the_directory_a_link_replaced(tmp_path: Path) -> None:
    # the converse: secrets is a real directory when the rule is first used, and the
    # agent puts a link in its place; the pattern as written still names secrets/
    (tmp_path / "secrets").mkdir()
    (tmp_path / "elsewhere").mkdir()
    rules = {
        "mode": "accept-edits",
        "deny": ["write(secrets/**)"],
        "allow": ["bash(rmdir secrets)", "bash(ln -s *)"],
    }
    steps = [write("secrets/x"), bash("rmdir secrets && ln -s elsewhere secrets")]
    steps.append(write("secrets/planted"))
    first, _, planted = await results(tmp_path, rules, *steps)
    assert first.startswith("Permission denied")
    assert (tmp_path / "secrets").is_symlink()
    assert planted.startswith("Permission denied"), planted
    assert not (tmp_path / "elsewhere" / "planted").exists()


@pytest.mark.parametrize("action", ["deny", "ask"])
async def test_a_pattern_with_brackets_covers_the_file_it_spells(
    tmp_path: Path, action: str
) -> None:
    (tmp_path / "keys[prod].txt").write_text("PROD_KEY=zz\n")
    (tmp_path / "keysp.txt").write_text("p\n")
    (tmp_path / "dir[a]").mkdir()
    (tmp_path / "dir[a]" / "k").write_text("K=1\n")
    rules = {action: ["read(keys[prod].txt)", "read(dir[a]/*)"]}
    steps = [("read", {"path": p}) for p in ("keys[prod].txt", "keysp.txt", "dir[a]/k")]
    named, as_set, inside = await results(tmp_path, rules, *steps)
    assert named.startswith("Permission denied") and "zz" not in named
    assert as_set.startswith("Permission denied")  # the set still matches as well
    assert inside.startswith("Permission denied") and "K=1" not in inside


async def test_an_allow_pattern_names_a_bracket_with_an_escape(tmp_path: Path) -> None:
    # an allow rule is not widened to the literal reading: [[] is the escape for '['
    rules = {"allow": ["write(out[[]1].txt)", "write(log[1].txt)"]}
    steps = [write("out[1].txt"), write("log[1].txt"), write("log1.txt")]
    escaped, literal, as_set = await results(tmp_path, rules, *steps)
    assert escaped.startswith("created out[1].txt")
    assert literal.startswith("Permission denied")
    assert as_set.startswith("created log1.txt")
