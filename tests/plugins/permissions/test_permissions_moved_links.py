"""A symbolic link moved or copied as a link is read from where it lands (permission
re-review of session 32, F1).

``ln -s ../../.env a`` leads nowhere from the workspace; ``mv a x/y/`` (or ``cp -P``,
``cp -a``, ``cp -d``, ``rsync -a``) keeps its target's text, so ``x/y/a`` leads to
``.env``. ``cat x/y/a`` later in the line was checked before the link was there and
printed ``.env`` under ``deny: read(.env)``, in one call or after the link was made in
an earlier one. Now (``_relinked``) a line's reads after a command that may make or
move a link are asked about, and a link that exists is read from where it lands
(``_made_links.moved_targets``). Real turns: the real bash tool on real files.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from permissions_turns import bash, real_turn

pytestmark = pytest.mark.plugins("permissions")

ALLOWED = ["ln", "mv", "cp", "rsync", "mkdir", "cat", "grep", "sh"]
RULES = {"allow": [f"bash({p} *)" for p in ALLOWED], "deny": ["read(.env)"]}


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".env").write_text("TOKEN=s3cr3t\n")
    (ws / "notes.txt").write_text("plain\n")
    (ws / "out" / "in").mkdir(parents=True)
    return ws


@pytest.mark.parametrize(
    "command",
    [
        "ln -s ../../.env a && mkdir -p x/y && mv a x/y/ && cat x/y/a",
        "ln -s ../../.env b && mkdir -p x/z && cp -P b x/z/ && cat x/z/b",
        "ln -s ../../.env c; mkdir -p x/w; cp -a c x/w/c; cat x/w/c",
        "ln -s ../../.env d; mkdir -p x/v; cp -d d x/v/; cat x/v/d",
        "ln -s ../../.env e; mkdir -p x/u; mv e x/u; cat x/u/e",
        "ln -s ../../.env f; mkdir -p x/t; rsync -a f x/t/; cat x/t/f",
        "ln -s ../../.env g; mkdir -p x/s; rsync -l g x/s/; cat x/s/g",
        "ln -s ../../.env h; mkdir -p x/r; sh -c 'mv h x/r/'; cat x/r/h",
        "mkdir -p x/q && ln -s ../../.env i && mv i x/q/ && grep -R TOKEN x",
        # out/ exists, the link is not yet below it when the line is checked
        "ln -s ../../.env j && mv j out/in/ && grep -R TOKEN out",
    ],
)
async def test_f1_a_link_moved_in_the_line_is_not_read_unasked(tmp_path, command):
    ws = _workspace(tmp_path)
    turn = await real_turn(ws, RULES, [bash(command)])
    assert [d["decision"] for d in turn.decisions] == ["deny"], turn.decisions
    assert not any("s3cr3t" in r for r in turn.results), turn.results
    assert turn.questions or turn.decisions[0]["rule"] == "deny: read(.env)", turn


async def test_f1_a_link_made_in_an_earlier_call_is_read_from_where_it_is_moved(tmp_path):
    ws = _workspace(tmp_path)
    calls = [
        bash("ln -s ../../.env a"),
        bash("mkdir -p x/y && mv a x/y/ && cat x/y/a"),
        bash("cp -P a out/in/ && grep -R TOKEN out"),
    ]
    turn = await real_turn(ws, RULES, calls)
    assert [d["decision"] for d in turn.decisions] == ["allow", "deny", "deny"], turn.decisions
    assert [d["rule"] for d in turn.decisions[1:]] == ["deny: read(.env)"] * 2
    assert not any("s3cr3t" in r for r in turn.results), turn.results
    assert (ws / "a").is_symlink() and not (ws / "x").exists()
    assert list((ws / "out" / "in").iterdir()) == []


@pytest.mark.parametrize(
    "command",
    [
        "mv notes.txt moved.txt && cat moved.txt",
        "cp notes.txt copy.txt && cat copy.txt",
        "cp -a notes.txt copy.txt; cat copy.txt",
        "mkdir -p out && mv notes.txt out/ && cat out/notes.txt",
    ],
)
async def test_f1_moving_plain_files_is_still_allowed(tmp_path, command):
    ws = _workspace(tmp_path)
    turn = await real_turn(ws, RULES, [bash(command)])
    assert [d["decision"] for d in turn.decisions] == ["allow"], turn.decisions
    assert "plain" in turn.results[0], turn.results


@pytest.mark.parametrize(
    ("command", "decision"),
    [
        ("tar xf a.tar && cat src/a.py", "ask"),  # an archive may hold links
        ("git checkout other && cat src/a.py", "ask"),  # so may a committed tree
        ("ls src | xargs mv -t src/config && cat src/a.py", "ask"),  # names not known
        ("mv $F src/config/ && cat src/a.py", "ask"),
        ("tar cf a.tar src && cat src/a.py", "allow"),  # packing makes no link
        ("git status && cat src/a.py", "allow"),
        ("mv src/a.py src/b.py && cat src/b.py", "allow"),  # a plain file
    ],
)
async def test_f1_what_may_make_or_move_a_link(judge, command, decision):
    allow = ["bash(tar *)", "bash(git *)", "bash(ls *)", "bash(xargs *)", "bash(mv *)"]
    rules = {"allow": [*allow, "bash(cat *)"], "deny": ["read(.env)"]}
    judged = await judge(rules, "bash", {"command": command})
    assert judged.decision == decision, judged.event["reason"]
