"""A lone surrogate (``\\ud800``, which JSON can carry and no file name can: it cannot
be encoded) in a command or a path is a value the checker cannot look at: the line is
not split (as for a NUL or a control character) and the call is asked about, with a
reason saying why, not a traceback from deep in the checker
(``UnicodeEncodeError`` from ``os.path.realpath``). ``\\udc80``-``\\udcff`` are bytes
Python's file system encoding carries (``surrogateescape``): they name a file."""

from __future__ import annotations

import pytest

from dsh_permissions._shell import Unparseable, split

pytestmark = pytest.mark.plugins("permissions")

RULES = {"allow": ["bash", "read", "write"], "deny": ["read(.env)", "bash(rm *)"]}


@pytest.mark.parametrize("line", ["cat \ud800", "cd \ud800 && cat x", "echo \udfffx"])
def test_the_splitter_refuses_a_lone_surrogate(line):
    with pytest.raises(Unparseable) as caught:
        split(line)
    assert "cannot be encoded" in str(caught.value)


@pytest.mark.parametrize(
    "command",
    ["cat \ud800", "cd \ud800 && cat x", "cat .env\ud800", "cat ~\ud800/x", "cat \ud800; rm x"],
)
async def test_a_command_holding_one_is_asked_about(judge, command):
    judged = await judge(RULES, "bash", {"command": command})
    assert judged.decision == "ask", judged.event["reason"]


@pytest.mark.parametrize(
    ("tool", "args"),
    [("read", {"path": "\ud800"}), ("write", {"path": "src\ud800", "content": "x"})],
)
async def test_a_path_holding_one_is_asked_about(judge, tool, args):
    judged = await judge(RULES, tool, args)
    assert judged.decision == "ask", judged.event["reason"]


def test_the_path_reading_says_why():
    from dsh_permissions._paths import path_readings

    with pytest.raises(ValueError, match="U\\+D800, which cannot be encoded"):
        path_readings("a\ud800", "/")
    assert path_readings("a\udc80", "/") == ("/a\udc80",)
