"""What a ``cp``/``mv`` source that does not exist yet, and a listed archive, do to a
line's later reads (usability review of session 32's stricter permissions).

A source that did not exist when the line was checked made every later read of the
line unknown: ``npm run build && cp build/bundle.js dist/ && cat dist/bundle.js`` was
asked, though ``npm run build && cat build/bundle.js`` is allowed (programs not looked
into are not tracked). Such a source now counts only through an earlier command of the
line that may make a link (which already makes the line's reads unknown): ``cp -s``
is one too. ``unzip -l`` and ``7z l`` only list an archive and unpack nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from permissions_turns import bash, real_turn
from permissions_util import allowed

pytestmark = pytest.mark.plugins("permissions")

RULES = {"allow": ["bash(*)"], "deny": ["read(.env)"]}


@pytest.mark.parametrize(
    "command",
    [
        "npm run build && cp build/bundle.js dist/ && cat dist/bundle.js",
        "make && mv out/app.bin bin/ && cat src/a.py",
        "cp -r missing/ copy/; cat src/a.py",
        "unzip -l a.zip && cat src/a.py",
        "unzip -qql a.zip && cat src/a.py",
        "unzip -v a.zip && cat src/a.py",
        "unzip -t a.zip && cat src/a.py",
        "unzip -p a.zip x.txt && cat src/a.py",
        "unzip -Z a.zip && cat src/a.py",
        "7z l a.7z && cat src/a.py",
        "7z t a.7z && cat src/a.py",
    ],
)
async def test_a_line_that_makes_no_link_keeps_its_reads_known(judge, command):
    await allowed(judge, RULES, command)


@pytest.mark.parametrize(
    "command",
    [
        "unzip a.zip && cat src/a.py",
        "unzip -o a.zip && cat src/a.py",
        "unzip -o -d out a.zip && cat out/a.py",  # where it unpacks
        "unzip $OPT a.zip && cat src/a.py",
        "unzip -P -l a.zip && cat src/a.py",  # -l is the password
        "unzip -qP -l a.zip && cat src/a.py",
        "7z x a.7z && cat src/a.py",
        "7z e a.7z && cat src/a.py",
        "cp -s src/a.py b && cat b",  # the link it makes
        "tar xf a.tar && cp new.txt dist/ && cat src/a.py",
    ],
)
async def test_a_line_that_may_make_a_link_makes_its_later_reads_unknown(judge, command):
    judged = await judge(RULES, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]
    # an "always" answer cannot cover such a read: the question says what will
    assert "run as a command of its own, the read is checked" in judged.requests[0].reason


@pytest.mark.parametrize(
    "command",
    [
        "cp -s ../../.env a && mkdir -p x/y && mv a x/y/ && cat x/y/a",
        "cp --symbolic-link ../../.env b; mkdir -p x/z; cp -P b x/z/; cat x/z/b",
    ],
)
async def test_a_link_cp_makes_and_the_line_moves_is_not_read_unasked(tmp_path: Path, command):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".env").write_text("TOKEN=s3cr3t\n")
    rules = {"allow": [f"bash({p} *)" for p in ("cp", "mv", "mkdir", "cat")]}
    turn = await real_turn(ws, {**rules, "deny": ["read(.env)"]}, [bash(command)])
    assert [d["decision"] for d in turn.decisions] == ["deny"], turn.decisions
    assert turn.questions, turn
    assert not any("s3cr3t" in r for r in turn.results), turn.results
