"""A bare name of a symlink is read as the file it leads to (permission review of
session 32, B6).

With ``pw -> /etc/passwd`` in the workspace and ``deny: bash(cat /etc/*)``, ``cat ./pw``
and ``cd . && cat pw`` were denied but ``cat pw`` ran: a word with a ``/`` is resolved
(``_command_text.canonical``), and a bare one only after a ``cd``
(``_moved.elsewhere_readings``). A bare word naming a symlink of the workspace is now
always read from the workspace root as well, for deny and ask rules
(``_moved.links_named``). Rows go through the real dispatcher (conftest ``judge``;
``innocent.txt -> .env``, ``link_out -> outside``); the turn runs the real bash tool.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from permissions_turns import bash, real_turn
from permissions_util import allowed

pytestmark = pytest.mark.plugins("permissions")


@pytest.fixture
def pw(layout) -> Path:
    (layout.ws / "pw").symlink_to(layout.outside / "secret.txt")
    return layout.ws / "pw"


def rules(layout, *, action: str = "deny") -> dict[str, list[str]]:
    outside = layout.outside
    return {"allow": ["bash(*)"], action: [f"bash(cat {outside}*)", f"bash(* {outside}/*)"]}


@pytest.mark.parametrize(
    "command",
    [
        "cat pw",
        "cat -n pw",
        "cat src/a.py pw",
        "cat -- pw",
        "timeout 5 cat pw",
        "X=1 cat pw",
        "cat link_out",  # a symlinked directory: matched as what it names too
    ],
)
async def test_b6_a_bare_name_of_a_symlink_is_matched_as_its_target(judge, layout, pw, command):
    judged = await judge(rules(layout), "bash", {"command": command})
    assert judged.decision == "deny", judged.event["reason"]


async def test_b6_an_ask_rule_sees_it_too(judge, layout, pw):
    judged = await judge(rules(layout, action="ask"), "bash", {"command": "cat pw"})
    assert judged.decision == "ask", judged.event["reason"]


@pytest.mark.parametrize(
    "command",
    [
        "cat src/a.py",
        "cat notes.txt",  # no such file
        "cat innocent.txt",  # leads to .env, which no rule covers
    ],
)
async def test_b6_other_names_are_decided_as_before(judge, layout, pw, command):
    await allowed(judge, rules(layout), command)


async def test_b6_a_symlink_read_by_its_bare_name_does_not_leak(tmp_path):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("top secret\n")
    (ws / "pw").symlink_to(outside / "secret.txt")
    deny = {"allow": ["bash(cat *)", "bash(head *)"], "deny": [f"bash(*{outside}/*)"]}
    turn = await real_turn(ws, deny, [bash("cat pw"), bash("head -n 1 pw")])
    assert [d["decision"] for d in turn.decisions] == ["deny", "deny"], turn.decisions
    assert not any("top secret" in r for r in turn.results), turn.results
