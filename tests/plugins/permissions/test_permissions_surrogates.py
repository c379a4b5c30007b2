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


CAFE = {"deny": ["read(café.txt)"]}


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read", {"path": "caf\udcc3\udca9.txt"}),
        ("bash", {"command": "cat caf\udcc3\udca9.txt"}),
        ("bash", {"command": "cat ./caf\udcc3\udca9.txt"}),
    ],
)
async def test_escaped_utf8_bytes_are_read_as_the_characters_they_spell(judge, tool, args):
    # the system opens the same file for caf\udcc3\udca9.txt as for café.txt
    judged = await judge(CAFE, tool, args, mode="bypass")
    assert judged.decision == "deny", judged.event["reason"]


def test_bytes_spelling_no_character_stay_as_they_are():
    from dsh_permissions._paths import utf8_decoded

    assert utf8_decoded("caf\udcc3\udca9") == "café"
    assert utf8_decoded("a\udcff") == "a\udcff"
    assert utf8_decoded("\ud800\udcc3\udca9") == "\ud800\udcc3\udca9"
    assert utf8_decoded("plain") == "plain"
