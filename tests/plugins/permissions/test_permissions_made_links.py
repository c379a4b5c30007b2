"""A symbolic link's relative target is read from where the link lies (permission
review of session 32, B2).

With ``deny: read(.env)``, ``ln -s ../.env src/leak && cat src/leak`` printed ``.env``:
``ln``'s operands were read as files from the shell's directory (``../.env``, a file
outside the workspace), while the link leads to ``src/../.env``, and ``cat src/leak``
was checked before the link existed. ``_made_links`` now also reads each relative
operand of ``ln -s`` / ``cp -s`` from the directories the link may land in (the last
operand, its directory, ``-t DIR``). Rows go through the real dispatcher (conftest
``judge``: ``.env``, ``src/config``); the turn runs the real bash tool on real files.
"""

from __future__ import annotations

import pytest
from permissions_turns import bash, real_turn
from permissions_util import allowed

pytestmark = pytest.mark.plugins("permissions")

DENY_ENV = {"allow": ["bash(*)"], "deny": ["read(.env)"]}


@pytest.mark.parametrize(
    "command",
    [
        "ln -s ../.env src/leak",
        "ln -sf ../.env src/leak",
        "ln -sfn ../.env src/leak",
        "ln --symbolic ../.env src/leak",
        "ln --sym ../.env src/leak",  # getopt takes a shortened long option
        "ln -s -- ../.env src/leak",
        "ln -s ../../.env src/config/leak",
        "ln -s ../.env {ws}/src/leak",  # the link named by its absolute path
        "ln -s ../.env src",  # src is a directory: the link is src/.env
        "mkdir -p d && ln -s ../.env d",  # d becomes one
        "mkdir -p d && ln -s ../.env d/l2; cat d/l2",
        "ln -s -t src ../.env",
        "ln -st src ../.env",
        "ln -tsrc -s ../.env",
        "ln --target-directory=src -s ../.env",
        "ln -s --target-dir src ../.env",
        "ln -S .bak -s ../.env src/leak",  # -S takes a value: still symbolic
        "sudo ln -s ../.env src/leak",
        "timeout 5 ln -s ../.env src/leak",
        "cp -s ../.env src/leak",
        "cp --symbolic-link ../.env src/leak",
        "ln -s ../.env src/config/../leak",
    ],
)
async def test_b2_a_link_made_to_a_denied_file_from_another_directory_is_denied(
    judge, layout, command
):
    judged = await judge(DENY_ENV, "bash", {"command": layout.fill(command)})
    assert judged.decision == "deny", judged.event["reason"]
    assert judged.event["rule"] == "deny: read(.env)"


@pytest.mark.parametrize(
    "command",
    [
        "ln -s ../a.py src/config/alias",  # src/a.py
        "ln -s a.py src/alias",  # src/a.py, as the link reads it
        "ln ../.env src/hard",  # a hard link: its target is named from here (../.env)
        "ln -s {ws}/src/a.py src/alias",
        "cp ../.env src/copy",  # a copy, not a link: ../.env is outside the workspace
    ],
)
async def test_b2_links_to_other_files_stay_allowed(judge, layout, command):
    await allowed(judge, DENY_ENV, layout.fill(command))


@pytest.mark.parametrize("mode", ["default", "bypass"])
async def test_b2_a_link_to_a_denied_file_cannot_be_read_in_the_same_line(tmp_path, mode):
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / ".env").write_text("TOKEN=s3cr3t\n")
    rules = {
        "mode": mode,
        "allow": ["bash(ln *)", "bash(cat *)", "bash(mkdir *)", "bash(grep *)"],
        "deny": ["read(.env)"],
    }
    commands = [
        "ln -s ../.env src/leak && cat src/leak",
        "mkdir -p d && ln -s ../.env d/l2; cat d/l2",
        "mkdir -p e && ln -s ../.env e && grep -r TOKEN e",
        "ln -s -t src ../.env && cat src/.env",
    ]
    turn = await real_turn(ws, rules, [bash(c) for c in commands])
    assert [d["decision"] for d in turn.decisions] == ["deny"] * len(commands), turn.decisions
    assert all(d["rule"] == "deny: read(.env)" for d in turn.decisions)
    assert not any("s3cr3t" in r for r in turn.results), turn.results
    assert not (ws / "src" / "leak").is_symlink()
